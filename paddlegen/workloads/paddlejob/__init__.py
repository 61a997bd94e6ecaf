"""Workload `paddlejob`: the PaddleFlow operator's PaddleJob. The operator picks the
mode from the roles (ps -> PS, several workers -> Collective, else Single) and injects the env
(PADDLE_TRAINER_ID, endpoints, ...) and ports itself, so none are rendered."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.workloads.base import (
    Importer,
    Imports,
    Pod,
    Workload,
    one_pod_per_node,
    pod,
    replica_pod_names,
)
from paddlegen.workloads.objects import NO_OPERATOR, TrainingObject
from paddlegen.workloads.paddlejob.operator import COORDINATE_CONTAINER, GLOO_PORT, host_network_dns
from paddlegen.workloads.paddlejob.settings import SECTION, PaddleJobSettings
from paddlegen.workloads.shared.operators import PADDLEFLOW_ENV

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules

# Kueue cannot queue it (it has no suspend field): no paths Kueue writes.
PADDLEJOB = TrainingObject(
    "batch.paddlepaddle.org/v1",
    "PaddleJob",
    health=(Path(__file__).with_name("health.lua"),),
    needs="a PaddleFlow PaddleJob needs PaddleFlow's paddle-operator (paddlegen is tested with "
    f"v0.3.5); {NO_OPERATOR}",
)
ROLES = {"ps": "ps", "worker": "worker", "heter": "heter"}
SETTINGS = ("cleanPodPolicy", "withGloo", "intranet", "elastic")  # spec.paddlejob -> spec
# Why a PaddleFlow PaddleJob cannot run native sidecars: its CRD (v0.3.5,
# config/crd/bases/batch.paddlepaddle.org_paddlejobs.yaml) lists no restartPolicy for init
# containers, and the operator's k8s.io/api v0.23.2 (go.mod) has no such field either.
NO_SIDECARS = (
    "the PaddleFlow PaddleJob (v0.3.5) has no native sidecars: its CRD knows no restartPolicy "
    "for init containers, so the API server drops it (or refuses the job under strict field "
    "validation, kubectl's default), and the sidecar would be an init container that never "
    "exits: the pods would never start training"
)


def context(job: Job) -> dict[str, Any]:
    # Only the user's own restartPolicy: unset, the operator chooses per role (OnFailure for
    # Service-mode workers and elastic jobs, else Never).
    restart = job.run.restartPolicy
    given = {key: getattr(job.settings, key) for key in SETTINGS}
    return {
        "settings": {key: value for key, value in given.items() if value is not None},
        "pods": {
            name: _default_scheduler(
                pod(
                    job,
                    role,
                    restart_policy=restart,
                    env=gloo_env(job),
                    operator_group=True,
                    **_host_network(job, role.affinity),
                )
            )
            for name, role in job.roles.items()
        },
    }


def gloo_env(job: Job) -> list[dict[str, str]]:
    """Gloo's rendezvous endpoint, for a PS job with withGloo. The operator derives it from
    the first server's endpoint by replacing port 36000 with 36018 (paddle-operator v0.3.5
    controllers/paddlejob_helper.go:268-274), but outside intranet Service that endpoint has
    the random port of :227, so the rendezvous lands on the server's own port: the workers
    push their parameters to Gloo's HTTP store instead of the server and crash
    (FleetWrapper::PushDenseParamSync, seen on a real node with Paddle 2.6.2). Server 0 serves
    the rendezvous where this names it (python/paddle/distributed/fleet/base/role_maker.py,
    _gloo_init), and its per-pod Service (paddlejob_controller.go:162-174) gives it a name in
    every intranet. Set in the spec's env, it wins over the operator's ConfigMap (envFrom)."""
    settings: PaddleJobSettings = job.settings
    if "ps" not in job.roles or not settings.withGloo:
        return []
    # the operator names pods and their Services <job>-<role>-<index> (genPaddleResName)
    return [{"name": "PADDLE_GLOO_HTTP_ENDPOINT", "value": f"{job.name}-ps-0:{GLOO_PORT}"}]


def _default_scheduler(role_pod: Pod) -> Pod:
    """A pod that is not Volcano's names the default scheduler: an operator started with
    --scheduling=volcano gang-schedules every PaddleJob whose pods name no other scheduler
    (paddle-operator v0.3.5 paddlejob_helper.go:470-487, withVolcano), waiting for a PodGroup
    that nothing creates Inqueue when the spec did not ask for Volcano."""
    if role_pod.scheduler:
        return role_pod
    return dataclasses.replace(role_pod, scheduler="default-scheduler")


def _host_network(job: Job, affinity: dict[str, Any] | None) -> dict[str, Any]:
    """`intranet: Host`: the operator sets hostNetwork (paddle-operator v0.3.5
    controllers/paddlejob_helper.go:360) but leaves dnsPolicy alone, and a host-network pod with
    the default policy uses the node's resolver, which cannot resolve the headless Services its
    init container looks up (helper.go:38): ClusterFirstWithHostNet. Every pod of the job listens
    on the same port (helper.go:227, 237), so two of them on one node collide: one per node."""
    settings: PaddleJobSettings = job.settings
    if settings.intranet != "Host":
        return {}
    return {
        "dns_policy": host_network_dns(settings.intranet),
        "affinity": one_pod_per_node(affinity, {"app.kubernetes.io/instance": job.name}),
    }


def imports() -> Imports:
    """The PaddleFlow PaddleJob read back."""
    from paddlegen.workloads.paddlejob import importer

    return Imports((Importer(PADDLEJOB, importer.paddleflow_job),))


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.paddlejob.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="paddlejob",
    summary="a PaddleFlow `PaddleJob`",
    needs="the PaddleFlow operator (no commits since 2023; Kueue cannot queue it)",
    title="PaddleFlow PaddleJob",
    objects=(PADDLEJOB,),
    roles=ROLES,
    derived_names=lambda name, spec: replica_pod_names(name, spec, ROLES),
    context=context,
    imports=imports,
    rules=own_rules,
    settings=SECTION,
    ps_default=True,
    pod_template="PaddleJob spec.<role>.template",
    scheduling_policy="PaddleJob spec.schedulingPolicy",
    explain={
        "spec.worker.replicas": ["PaddleJob spec.worker.replicas"],
        "spec.ps.replicas": ["PaddleJob spec.ps.replicas"],
        "spec.heter.replicas": ["PaddleJob spec.heter.replicas"],
        "spec.run.restartPolicy": ["{tmpl}.spec.restartPolicy"],
        **{f"spec.paddlejob.{key}": [f"PaddleJob spec.{key}"] for key in SETTINGS},
    },
    operator_env=PADDLEFLOW_ENV,
    operator_init_containers=(COORDINATE_CONTAINER,),
    no_sidecars=NO_SIDECARS,
    # its PodGroup has minMember, minResources, queue and priority only (paddle-operator
    # v0.3.5 controllers/paddlejob_helper.go:489-517 constructPodGroup)
    no_network_topology="the PaddleFlow operator",
    # Kueue suspends a job through its spec; the PaddleFlow PaddleJob has no suspend.
    queueable=False,
    # The operator appends PADDLE_TRAINER_ID after the spec's env, so a $(PADDLE_TRAINER_ID)
    # reference would not expand; the shell copies it instead.
    trainer_identity=lambda count: (
        [{"name": "TRAINERS", "value": str(count)}],
        'export TRAINER_ID="${PADDLE_TRAINER_ID:-}"; exec ',
    ),
    # paddle-operator v0.3.5 controllers/paddlejob_helper.go:38 and 227-233
    peer_names="the operator's init container (coord-paddle) waits until the job's pod names "
    "resolve, the endpoints are Service names under intranet Service, and Gloo's rendezvous "
    "is the first parameter server's Service",
    init_sections=lambda ps: {
        "paddlejob": {"cleanPodPolicy": "OnCompletion", **({"withGloo": 1} if ps else {})}
    },
)
