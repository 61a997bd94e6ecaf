"""Workload `trainjob`: Paddle's collective training on Kubeflow Trainer v2. paddlegen
renders a TrainJob that references paddlegen's own Paddle ClusterTrainingRuntime
(workloads/trainjob/runtime.py, printed by `paddlegen runtime` for a platform team to install
once): Trainer makes a JobSet from the runtime's template, whose replicated job `node` is one
Indexed Job of `numNodes` pods, each running Paddle's launcher with the same contract as
collective-job (workloads/shared/launcher.py: env, the rank-0-by-IP wrapper, the pod failure
policy).

Trainer's sources cited are github.com/kubeflow/trainer at v2.3.0, JobSet's
sigs.k8s.io/jobset at v0.12.0 (the version Trainer v2.3.0's go.mod requires)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import replicas
from paddlegen.spec.network import NCCL_ENV
from paddlegen.workloads.base import QUEUE_NAME, Importer, Imports, Workload, pod, run_fields
from paddlegen.workloads.objects import BATCH_JOB, JOBSET, SHARED_HEALTH, TrainingObject
from paddlegen.workloads.shared import jobset
from paddlegen.workloads.shared.launcher import (
    BOUNDED_RUN,
    COMMAND_COMMENT,
    checkpoint_args,
    command,
    writable_scratch,
)
from paddlegen.workloads.trainjob import runtime
from paddlegen.workloads.trainjob.carried import CONTRACT_ENV, UNSUPPORTED
from paddlegen.workloads.trainjob.names import (
    API_VERSION,
    MANAGER,
    NODE,
    VOLCANO_RUNTIME,
    runtime_of,
)
from paddlegen.workloads.trainjob.settings import SECTION, TrainJobSettings

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules

# Argo CD v3.5.1 ships no health check for a TrainJob (resource_customizations/).
TRAINJOB = TrainingObject(
    API_VERSION,
    "TrainJob",
    health=(
        Path(__file__).with_name("health.lua"),
        SHARED_HEALTH / "replicated-jobs.lua",
        SHARED_HEALTH / "conditions.lua",
    ),
    # Kueue v0.19.2 (pkg/controller/jobs/trainjob/trainjob_controller.go:130-136, :243-288):
    # its spec.suspend; its runtime patch is below
    kueue_written=(".spec.suspend",),
    # Kueue's webhook appends a runtime patch of its own (manager kueue.x-k8s.io/manager) to
    # every TrainJob it sees (pkg/controller/jobs/trainjob/trainjob_webhook.go:91-102), and
    # fills it with the pod template's share on admission (trainjob_controller.go:76,
    # :243-288): in a cluster with Kueue an unqueued TrainJob would read OutOfSync, and
    # self-heal would take the patch away.
    kueue_written_always=(
        '.spec.runtimePatches[]? | select(.manager == "kueue.x-k8s.io/manager")',
    ),
    needs="a TrainJob needs Kubeflow Trainer, which installs JobSet too (paddlegen is tested "
    "with Trainer v2.3.0), and paddlegen's runtimes (`paddlegen runtime`); workload "
    "collective-job runs the same training with no operator",
)
_POD = (
    f"TrainJob spec.runtimePatches[{MANAGER}].trainingRuntimeSpec.template.spec"
    f".replicatedJobs[{NODE}].template.spec.template"
)


def runtime_name(job: Job) -> str:
    """The runtime the TrainJob references: with group restarts or pod settings only a runtime
    carries, its own TrainingRuntime (named after it), else a ClusterTrainingRuntime."""
    if runtime.needs_own_runtime(job):
        return job.name
    settings: TrainJobSettings = job.settings
    if settings.runtime:
        return settings.runtime
    return runtime_of(
        volcano=job.scheduling.scheduler == "volcano", queued=job.scheduling.kueue is not None
    )


def own_runtime(job: Job) -> dict[str, Any] | None:
    """With group restarts (spec.run.restarts) or pod settings only a runtime carries
    (runtime.POD_SETTINGS), the job's own TrainingRuntime: the JobSet policy that restarts its
    group and its pods' template are a runtime's (runtime.job_runtime)."""
    if not runtime.needs_own_runtime(job):
        return None
    return runtime.job_runtime(
        job, volcano=job.scheduling.scheduler == "volcano", queued=job.scheduling.kueue is not None
    )


def context(job: Job) -> dict[str, Any]:
    worker = job.roles["worker"]
    # The pods join Volcano's gang through the runtime (its podGroupPolicy and scheduler),
    # not through pod settings of their own.
    log_env, volumes = writable_scratch(job, worker)
    node = pod(
        job,
        worker,
        gang=False,
        command=command(worker),
        args=checkpoint_args(job, worker),
        env=log_env,
        volumes=volumes,
        # every pod of a TrainJob's JobSet carries its restart attempt, 0 without restarts
        attempt=jobset.ATTEMPT_ENV_SOURCE,
    )
    run = run_fields(job, WORKLOAD.run_keys)
    if runtime.attempt_deadline(job) is not None:
        run.pop("activeDeadlineSeconds")  # each attempt's, on the job's own runtime
    jobset_annotations = {}
    if job.scheduling.scheduler == "volcano":
        # Trainer's Volcano plugin gives the PodGroup the queue of this annotation on the
        # JobSet template, which a runtime patch's metadata adds to
        # (pkg/runtime/core/trainingruntime.go:143-160, plugins/volcano/volcano.go:142-146).
        jobset_annotations[QUEUE_NAME] = job.scheduling.queue
    return {
        "runtime": runtime_name(job),
        "runtime_kind": (
            runtime.NAMESPACED_KIND if runtime.needs_own_runtime(job) else "ClusterTrainingRuntime"
        ),
        "own_runtime": own_runtime(job),
        "run": run,
        # Trainer replaces the runtime container's command when the TrainJob gives one
        # (plugins/jobset/builder.go:136-141): the master wrapper goes in the TrainJob's too.
        "trainer": {
            "image": worker.image,
            "command": node.container.command,
            "args": node.container.args,
            "env": [
                {"name": "PADDLE_NNODES", "value": str(worker.replicas)},
                *node.container.env,
            ],
            "numNodes": worker.replicas,
            "resourcesPerNode": worker.resources,
        },
        "manager": MANAGER,
        "node": NODE,
        "jobset_annotations": jobset_annotations,
        "pod": node,
    }


def derived_names(name: str, spec: dict[str, Any]) -> list[str]:
    """The longest pod name of the JobSet Trainer makes, `<job>-node-0-<replicas - 1>-xxxxx`,
    which JobSet's webhook checks (shared/jobset.py): Trainer names the JobSet after the
    TrainJob (plugins/jobset/jobset.go:430) and gives its Job `numNodes` completions
    (jobset.go:316-317, SyncParallelCount). The JobSet, its Service (the subdomain), its Job
    `<job>-node-0` and the pods' hostnames are shorter. Refused there, the JobSet is never
    made, after the API server took the TrainJob."""
    return [jobset.longest_pod_name(name, replicas(spec.get("worker", {})), NODE)]


def _trainer(path: str) -> str:
    return f"TrainJob spec.trainer.{path}"


def imports() -> Imports:
    """The TrainJob read back, with its own TrainingRuntime if it has one."""
    from paddlegen.workloads.trainjob import importer

    return Imports((Importer(TRAINJOB, importer.trainjob),))


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.trainjob.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="trainjob",
    summary="a Kubeflow Trainer v2 `TrainJob` on paddlegen's Paddle runtime",
    needs="Kubeflow Trainer and JobSet",
    title="TrainJob",
    objects=(TRAINJOB,),
    # Trainer makes a JobSet of the TrainJob, and the JobSet a batch Job per replicated job.
    children=(JOBSET, BATCH_JOB),
    roles={"worker": NODE},
    derived_names=derived_names,
    context=context,
    imports=imports,
    rules=own_rules,
    group_restarts="a TrainingRuntime of its own",
    settings=SECTION,
    run_keys=("activeDeadlineSeconds",),
    pod_template=_POD,
    run_policy="TrainJob spec",
    explain={
        "spec.image": [_trainer("image")],
        "spec.command": [_trainer("command")],
        "spec.args": [_trainer("args")],
        "spec.env": [_trainer("env")],
        **{f"spec.nccl.{key}": [_trainer(f"env[{name}].value")] for key, name in NCCL_ENV.items()},
        "spec.security.capabilities.add": [
            f"{{tmpl}}.spec.containers[{NODE}].securityContext.capabilities.add"
        ],
        "spec.resources": [_trainer("resourcesPerNode")],
        "spec.gpus": [_trainer("resourcesPerNode.limits[<accelerator>]")],
        "spec.accelerator": [_trainer("resourcesPerNode.limits")],
        "spec.volumes.mountPath": [
            f"{{tmpl}}.spec.containers[{NODE}].volumeMounts[<name>].mountPath"
        ],
        "spec.worker.replicas": [_trainer("numNodes"), _trainer("env[PADDLE_NNODES].value")],
        "spec.scheduling.scheduler": ["TrainJob spec.runtimeRef.name"],
        "spec.scheduling.minAvailable": [],  # Trainer's PodGroup takes every pod
        "spec.scheduling.queue": [
            f"TrainJob spec.runtimePatches[{MANAGER}].trainingRuntimeSpec.template.metadata"
            f".annotations[{QUEUE_NAME}]"
        ],
        "spec.trainjob.runtime": ["TrainJob spec.runtimeRef.name"],
        "spec.run.restarts": ["TrainingRuntime spec.template.spec.failurePolicy.maxRestarts"],
        # the job's own runtime carries them (runtime.POD_SETTINGS); the data Job too
        **{
            f"spec.{key}": [
                f"{runtime.NAMESPACED_KIND} spec.template.spec.replicatedJobs[{NODE}].template"
                f".spec.template.spec.{key}",
                f"DataJob spec.template.spec.{key}",
            ]
            for key in runtime.POD_SETTINGS
        },
    },
    unsupported=UNSUPPORTED,
    # Trainer's Volcano plugin gives its PodGroup the runtime's podGroupPolicy.volcano
    # .networkTopology (plugins/volcano/volcano.go:198-202), which no runtime patch reaches and
    # paddlegen's runtimes leave out
    no_network_topology="Trainer from paddlegen's runtime",
    launcher=CONTRACT_ENV,
    peer_names="every rank finds rank 0 by its name in the JobSet's headless Service, "
    "<job>-node-0-0.<job> (PADDLE_MASTER)",
    init_sections=lambda ps: {"run": BOUNDED_RUN},
    init_comments={
        "spec.workload": "on paddlegen's runtime: install it once with `paddlegen runtime`",
        "spec.command": COMMAND_COMMENT,
        "spec.args": "the training script and its flags: the launcher runs it on every node",
        "spec.worker": "one pod per node: the TrainJob's numNodes, PADDLE_NNODES",
        "spec.scheduling.scheduler": f"Volcano gang scheduling: the runtime {VOLCANO_RUNTIME}",
    },
    example_fields={"args": ["train.py"]},  # the launcher's training script
)
