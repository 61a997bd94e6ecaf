"""paddlegen's Paddle ClusterTrainingRuntimes, which the `trainjob` workload's TrainJobs
reference (trainjob/names.py holds their names and defaults): what `paddlegen runtime`
prints for a platform team to install once. Each is a JobSet template whose replicated job
`node` runs Paddle's launcher on every pod with collective-job's contract (its env, the
rank-0-by-IP wrapper and the pod failure policy, workloads/shared/launcher.py). A TrainJob with
group restarts, or with pod settings no runtime patch carries (``pod_settings``), gets a
TrainingRuntime of its own instead (``job_runtime``).

Trainer's sources cited are github.com/kubeflow/trainer at v2.3.0, JobSet's
sigs.k8s.io/jobset at v0.12.0."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import recommended_labels
from paddlegen.workloads.shared import jobset
from paddlegen.workloads.shared.launcher import (
    LAUNCHER,
    NO_NODE_COUNT_EXIT,
    WRAPPER,
    failure_policy,
    field_env,
    rank_env,
)
from paddlegen.workloads.trainjob.names import (
    ANCESTOR_LABEL,
    API_VERSION,
    JOBSET_NAME,
    MASTER_PORT,
    NODE,
    RUNTIME_IMAGE,
    runtime_of,
)
from paddlegen.yamlio import dump_yaml

if TYPE_CHECKING:
    from paddlegen.spec.model import Job

NAMESPACED_KIND = "TrainingRuntime"
# Pod settings a runtime patch has no field for (Trainer v2.3.0 PodSpecPatch,
# pkg/apis/trainer/v1alpha1/trainjob_types.go:389-470), which a runtime's own pod template
# carries: a TrainJob whose spec sets them runs on a TrainingRuntime of its own.
POD_SETTINGS = ("automountServiceAccountToken", "dnsPolicy", "dnsConfig")


def pod_settings(job: Job) -> dict[str, Any]:
    """What the spec sets of ``POD_SETTINGS`` that paddlegen's runtimes do not have already
    (they mount no token: automountServiceAccountToken false is theirs)."""
    worker = job.roles["worker"]
    given = {key: getattr(worker, key) for key in POD_SETTINGS}
    if given["automountServiceAccountToken"] is False:
        del given["automountServiceAccountToken"]
    return {key: value for key, value in given.items() if value is not None}


def needs_own_runtime(job: Job) -> bool:
    """Whether the TrainJob runs on a TrainingRuntime of its own: with group restarts (a
    runtime's JobSet failure policy), or with pod settings only a runtime carries."""
    return bool(job.run.restarts) or bool(pod_settings(job))


def runtime_env() -> list[dict[str, Any]]:
    """The runtime's share of the launcher's contract (the TrainJob adds PADDLE_NNODES): the
    job id read from the JobSet's label, rank 0 by name through $(VAR) expansion of it. The
    JobSet controller names pod i of the replicated job's one Job `<jobset>-node-0-<i>` in the
    subdomain `<jobset>` (jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go:380-389), which
    Trainer does not change (plugins/jobset/jobset.go:281-307)."""
    return [
        *rank_env(),
        field_env("PADDLE_JOB_ID", f"metadata.labels['{JOBSET_NAME}']"),
        {
            "name": "PADDLE_MASTER",
            "value": f"$(PADDLE_JOB_ID)-{NODE}-0-0.$(PADDLE_JOB_ID):{MASTER_PORT}",
        },
    ]


def runtime(*, volcano: bool, queued: bool) -> dict[str, Any]:
    """A Paddle ClusterTrainingRuntime: a JobSet template of one replicated job `node`; a
    ``queued`` one's pod failure policy lets Kueue preempt (shared/launcher.py failure_policy)."""
    name = runtime_of(volcano=volcano, queued=queued)
    pod_spec: dict[str, Any] = {
        # The pod failure policy takes no other (Kubernetes pkg/apis/batch/validation), and
        # JobSet's webhook would default OnFailure (pkg/webhooks/jobset_webhook.go:124-127).
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,  # the launcher never talks to the API server
        **({"schedulerName": "volcano"} if volcano else {}),
        "containers": [
            {
                "name": NODE,
                "image": RUNTIME_IMAGE,
                "command": [*WRAPPER, *LAUNCHER],
                "env": runtime_env(),
                "ports": [{"name": "master", "containerPort": MASTER_PORT, "protocol": "TCP"}],
            }
        ],
    }
    spec: dict[str, Any] = {
        # A plain ML policy (no torch, mpi, ...): Trainer sets the `trainer` pod set's count
        # from the TrainJob's numNodes (plainml.go:56-61), and applies resourcesPerNode only
        # when the runtime has an mlPolicy (core/trainingruntime.go:188-200).
        "mlPolicy": {"numNodes": 1},
        # Trainer's Volcano plugin makes the PodGroup, of every pod (volcano.go:113-150).
        **({"podGroupPolicy": {"volcano": {}}} if volcano else {}),
        "template": {
            "spec": {
                # JobSet's defaults (jobset_webhook.go:129-139), said: rank 0's name resolves
                # before any pod is ready.
                "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                # No failurePolicy: the JobSet fails as soon as one of its Jobs fails, with no
                # restart (jobset v0.12.0 pkg/controllers/failure_policy.go:49-61).
                "replicatedJobs": [
                    {
                        "name": NODE,
                        "replicas": 1,
                        "template": {
                            "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                            "spec": {
                                # Trainer sets parallelism = completions = numNodes
                                # (plugins/jobset/jobset.go:310-330, SyncParallelCount).
                                "completionMode": "Indexed",
                                "podFailurePolicy": failure_policy(NODE, queued),
                                "template": {"spec": pod_spec},
                            },
                        },
                    }
                ],
            }
        },
    }
    labels = {
        **recommended_labels(name),
        "app.kubernetes.io/component": "training-runtime",
        "trainer.kubeflow.org/framework": "paddle",
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name, "labels": dict(sorted(labels.items()))},
        "spec": spec,
    }


def job_runtime(job: Job, *, volcano: bool, queued: bool) -> dict[str, Any]:
    """The TrainingRuntime of ``job`` alone, in its namespace and named after it, of
    ``own_runtime_spec``."""
    namespace = {"namespace": job.namespace} if job.namespace else {}
    return {
        "apiVersion": API_VERSION,
        "kind": NAMESPACED_KIND,
        "metadata": {"name": job.name, **namespace, "labels": job.labels},
        "spec": own_runtime_spec(
            job.run.restarts,
            volcano=volcano,
            queued=queued,
            pod=pod_settings(job),
            deadline=attempt_deadline(job),
        ),
    }


def attempt_deadline(job: Job) -> int | None:
    """With group restarts, spec.run.activeDeadlineSeconds, which then bounds each attempt on
    its own runtime's Job, not the TrainJob: Trainer counts a TrainJob's from its creation (or
    its last unsuspend) and, once it passes, fails the TrainJob for good and deletes its JobSet
    (pkg/controller/trainjob_controller.go:155-181), so a hung first attempt would use the
    whole budget and no restart would follow. A Job's deadline fails that Job alone
    (DeadlineExceeded), which the JobSet's failure policy restarts, as any failure of a rank
    (shared/jobset.py); each attempt's Jobs are new, each with its deadline from its start."""
    return job.run.activeDeadlineSeconds if job.run.restarts else None


def own_runtime_spec(
    restarts: int,
    *,
    volcano: bool,
    queued: bool,
    pod: dict[str, Any] | None = None,
    deadline: int | None = None,
) -> dict[str, Any]:
    """A job's own TrainingRuntime's spec: paddlegen's runtime for its scheduler and queue,
    whose JobSet restarts every rank when one fails, up to ``restarts`` times
    (shared/jobset.py's failure policy), each attempt's Job bounded by ``deadline``
    (``attempt_deadline``), and whose pods have the settings ``pod`` (``pod_settings``). The
    TrainJob cannot carry them itself: a runtime patch reaches the JobSet's replicated jobs
    only (pkg/apis/trainer/v1alpha1/trainjob_types.go:335-343), with the pod fields of
    PodSpecPatch, and Trainer makes the JobSet of the runtime's whole template
    (plugins/jobset/jobset.go:344-416)."""
    shared = runtime(volcano=volcano, queued=queued)
    template = shared["spec"]["template"]["spec"]
    (node,) = template["replicatedJobs"]
    node_job = node["template"]["spec"]
    node_job = {**node_job, "template": {"spec": {**node_job["template"]["spec"], **(pod or {})}}}
    failure = {}
    if restarts:
        # as a collective-job's with restarts: any counted failure fails the Job at once, so
        # that the JobSet restarts every rank, never one alone
        node_job["backoffLimit"] = 0
        if deadline is not None:
            node_job["activeDeadlineSeconds"] = deadline
        failure = jobset.failure_policy(restarts, NO_NODE_COUNT_EXIT)
    template = {
        "network": template["network"],
        **({"failurePolicy": failure} if failure else {}),
        "replicatedJobs": [{**node, "template": {**node["template"], "spec": node_job}}],
    }
    return {**shared["spec"], "template": {"spec": template}}


def runtimes() -> list[dict[str, Any]]:
    """Every runtime paddlegen's TrainJobs may reference, the default one first."""
    return [
        runtime(volcano=volcano, queued=queued)
        for volcano in (False, True)
        for queued in (False, True)
    ]


def runtimes_text() -> str:
    """``runtimes`` as one YAML stream, in canonical YAML: the same bytes on every run."""
    return "".join(f"---\n{dump_yaml(obj)}" for obj in runtimes())
