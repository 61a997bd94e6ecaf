"""Workload `kubeflow-paddlejob`: the Kubeflow training-operator's PaddleJob. ps becomes the
Master replicas (the operator then runs PS mode with master-0 as rendezvous); the operator sets
PADDLE_MASTER, PADDLE_NNODES, ... itself."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.workloads.base import (
    RUN_KEYS,
    Importer,
    Imports,
    Workload,
    pod,
    replica_pod_names,
    run_fields,
    trainers_env,
)
from paddlegen.workloads.kubeflow_paddlejob.names import ROLES, default_restart_policy
from paddlegen.workloads.kubeflow_paddlejob.settings import SECTION, KubeflowSettings
from paddlegen.workloads.objects import (
    NO_OPERATOR,
    SHARED_HEALTH,
    TrainingObject,
    kueue_pod_template,
)
from paddlegen.workloads.shared.launcher import BOUNDED_RUN
from paddlegen.workloads.shared.operators import JOB_BACKOFF_LIMIT, KUBEFLOW_ENV

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules

PADDLEJOB = TrainingObject(
    "kubeflow.org/v1",
    "PaddleJob",
    health=(Path(__file__).with_name("health.lua"), SHARED_HEALTH / "conditions.lua"),
    # Kueue v0.19.2 (pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go
    # :55-72): runPolicy.suspend and every replica's pod template
    kueue_written=(
        ".spec.runPolicy.suspend",
        *kueue_pod_template(".spec.paddleReplicaSpecs[]?.template"),
    ),
    needs="a Kubeflow PaddleJob needs the Kubeflow training-operator (paddlegen is tested with "
    f"v1.9.0); {NO_OPERATOR}",
)
# Kubeflow labels every pod with its index within the replica type; the downward API hands it
# to the container, since the operator sets no per-trainer index itself.
INDEX_LABEL = "training.kubeflow.org/replica-index"
INDEX_REF = {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX_LABEL}']"}}


def context(job: Job) -> dict[str, Any]:
    # The operator finds its container by the name `paddle` and its rendezvous port by the
    # name `master` in every replica type. Init containers and native sidecars reach the pods
    # as rendered: training-operator v1.9.0 creates each pod from a copy of its replica's
    # template (pkg/controller.v1/common/pod.go:410, 455), sets env in `containers` only
    # (paddlepaddle/envvar.go:53), and its CRD and k8s.io/api v0.31.3 (go.mod) know an init
    # container's restartPolicy.
    settings: KubeflowSettings = job.settings
    ports = [{"name": "master", "containerPort": settings.port}]
    # training-operator v1.9.0 bounds restarts only when runPolicy.backoffLimit is set
    # (pkg/controller.v1/common/job.go:192-204): without it a crashing trainer restarts in
    # place for ever (OnFailure), holding its node. Bounded as a batch Job is by default.
    run = {"backoffLimit": JOB_BACKOFF_LIMIT, **run_fields(job)}
    return {
        "run": run,
        # The operator copies this onto the pods; unset, its own default is OnFailure. A
        # collective job (no Master) gets Never instead: a worker the kubelet restarts in place
        # comes back with rank -1 (training-operator v1.9.0 paddlepaddle/envvar.go:53-141) and
        # never completes the rendezvous the others finished, while with Never one failed
        # worker fails the whole job at once (paddlepaddle_controller.go:427-434), as a
        # collective-job's does. A PS job keeps OnFailure: its trainers reach the servers anew.
        "restart_policy": job.run.restartPolicy or default_restart_policy("ps" in job.roles),
        "replicas": [  # (replica type, role, pod), Master first
            (ROLES[name], role, pod(job, role, ports=ports, operator_group=True))
            for name, role in job.roles.items()
            if name in ROLES
        ],
    }


def imports() -> Imports:
    """The Kubeflow PaddleJob read back, and a PaddleFlow one converted."""
    from paddlegen.workloads.kubeflow_paddlejob import convert, importer

    return Imports((Importer(PADDLEJOB, importer.kubeflow_job),), convert=convert.from_paddleflow)


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.kubeflow_paddlejob.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="kubeflow-paddlejob",
    summary="a Kubeflow training-operator `PaddleJob`",
    needs="training-operator v1.9",
    title="Kubeflow PaddleJob",
    objects=(PADDLEJOB,),
    roles=ROLES,
    derived_names=lambda name, spec: replica_pod_names(name, spec, ROLES),
    context=context,
    imports=imports,
    rules=own_rules,
    converts_from=("paddlejob",),
    settings=SECTION,
    run_keys=RUN_KEYS,
    # With parameter servers, a deadline: the servers run until a trainer stops them (ps-end).
    init_sections=lambda ps: {"run": BOUNDED_RUN} if ps else {},
    pod_template="PaddleJob spec.paddleReplicaSpecs.<Role>.template",
    run_policy="PaddleJob spec.runPolicy",
    scheduling_policy="PaddleJob spec.runPolicy.schedulingPolicy",
    explain={
        "spec.worker.replicas": ["PaddleJob spec.paddleReplicaSpecs.Worker.replicas"],
        "spec.ps.replicas": ["PaddleJob spec.paddleReplicaSpecs.Master.replicas"],
        "spec.run.restartPolicy": ["PaddleJob spec.paddleReplicaSpecs.Worker.restartPolicy"],
        "spec.kubeflow.cleanPodPolicy": ["PaddleJob spec.runPolicy.cleanPodPolicy"],
        "spec.kubeflow.port": ["{tmpl}.spec.containers[paddle].ports[master].containerPort"],
    },
    operator_env=KUBEFLOW_ENV,
    # its runPolicy.schedulingPolicy has no network topology (training-operator v1.9.0
    # pkg/apis/kubeflow.org/v1/common_types.go:244-251)
    no_network_topology="the training-operator",
    trainer_identity=lambda count: (trainers_env(count, {"valueFrom": INDEX_REF}), ""),
    init_comments={
        "spec.scheduling.kueue.queue": "needs Kueue's kubeflow.org/paddlejob integration on "
        "(off by default from Kueue v0.19)",
    },
    # training-operator v1.9.0 pkg/controller.v1/paddlepaddle/envvar.go:78-123
    peer_names="every rank finds the master by the name of the Service the operator makes "
    "for it, <job>-master-0 (PADDLE_MASTER)",
)
