"""The kinds of object a job is made of, as Argo CD and Kueue see them (``TrainingObject``):
the Lua health check Argo CD judges one by, and the fields Kueue writes into one it queues.

A workload lists the kinds it renders (``Workload.objects``, its main object first) and those
its controllers make of them that Argo CD judges too (``Workload.children``). A kind only one
workload renders is defined in that workload's folder; the kinds several share are defined
here, with Volcano's PodGroup, which no workload renders but a job under Volcano gets whatever
its workload. paddlegen/gitops gathers them from the registry: the argocd-cm health checks
(``argocd_health``) and an Application's ignoreDifferences (``kueue_diff``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from paddlegen.spec.record import record

_KUEUE_PREFIX = "kueue.x-k8s.io/"
# The Lua of the health checks of the kinds defined here, and the parts several checks share.
SHARED_HEALTH = Path(__file__).parent / "shared" / "health"
# The way around an operator's PaddleJob, for its ``needs``.
NO_OPERATOR = (
    "workload collective-job runs collective training with no operator (`paddlegen import "
    "--to collective-job` converts a PaddleJob)"
)


@record
class TrainingObject:
    """A kind of object a workload renders, or one its controllers make that Argo CD shows in
    the Application's tree and judges the health of."""

    api_version: str
    kind: str
    # The Lua files its argocd-cm health check is made of, in order: a kind one workload
    # renders has its own in the workload's folder (health.lua), the kinds defined here theirs
    # in SHARED_HEALTH. The condition-driven checks share a body (conditions.lua) after their
    # own settings, and TrainJob and JobSet their counts of child Jobs (replicated-jobs.lua).
    health: tuple[Path, ...]
    # What Kueue writes into such an object it queues, as jq paths from the object; Argo CD
    # ignores them in an object that is in a queue only (paddlegen/gitops/kueue_diff.py). A
    # child's are never used: the object it is made from is the one Kueue queues.
    kueue_written: tuple[str, ...] = ()
    # What Kueue writes into every such object, queued or not, as jq paths from the object.
    kueue_written_always: tuple[str, ...] = ()
    # What a cluster needs to serve it, which `validate --server` says when the API server
    # does not: the controller its CRD comes with, at the version paddlegen is tested against
    # (hack/README.md), and the way to do without it; "" for a kind no workload renders.
    needs: str = ""

    @property
    def api_kind(self) -> tuple[str, str]:
        """Its apiVersion and kind."""
        return self.api_version, self.kind

    @property
    def group(self) -> str:
        """Its API group: "" in the core group (apiVersion v1)."""
        return self.api_version.rpartition("/")[0]

    @property
    def resource(self) -> str:
        """Its resource as kubectl names it, ``<plural>.<group>`` (each kind here is pluralised
        with an s)."""
        return f"{self.kind.lower()}s.{self.group}"

    @property
    def health_key(self) -> str:
        """The argocd-cm key suffix of its health check: ``<group>_<Kind>``, the kind alone in
        the core group."""
        return f"{self.group}_{self.kind}" if self.group else self.kind


def each_kind_once(objects: Iterable[TrainingObject]) -> list[TrainingObject]:
    """``objects`` in their order, the first of each group and kind only (Argo CD keys health
    checks and ignoreDifferences by group and kind, whatever the version)."""
    seen: dict[tuple[str, str], TrainingObject] = {}
    for obj in objects:
        seen.setdefault((obj.group, obj.kind), obj)
    return list(seen.values())


def kueue_pod_template(template: str) -> tuple[str, ...]:
    """What Kueue merges into a pod template on admission and restores on eviction (sigs.k8s.io/
    kueue v0.19.2 pkg/podset/podset.go:181-238 Merge, RestorePodSpec): the flavor's node labels
    as nodeSelector, its tolerations, scheduling gates, and labels and annotations of its own
    (kueue.x-k8s.io/podset, pkg/controller/jobframework/reconciler.go:1756)."""
    return (
        f"{template}.spec.nodeSelector",
        f"{template}.spec.tolerations",
        f"{template}.spec.schedulingGates",
        kueue_keys(f"{template}.metadata.labels"),
        kueue_keys(f"{template}.metadata.annotations"),
    )


def kueue_keys(mapping: str) -> str:
    """The keys of ``mapping`` in Kueue's own domain, as a path (the key generator in the
    brackets reads the object itself)."""
    return f'{mapping}[({mapping} // {{}} | keys[] | select(startswith("{_KUEUE_PREFIX}")))]'


# batch/v1 Job: the main object of job, distributed-job and collective-job, the data Job of any
# workload (spec.dataPrep, templates/_common), and what a JobSet makes of each replicated job.
# Its health check replaces Argo CD's own, which calls a Job Kueue resumed finished (job.lua).
BATCH_JOB = TrainingObject(
    "batch/v1",
    "Job",
    health=(SHARED_HEALTH / "job.lua", SHARED_HEALTH / "conditions.lua"),
    # Kueue v0.19.2 (pkg/controller/jobs/job/job_controller.go:165-167 Suspend, :377-391
    # RunWithPodSetsInfo): spec.suspend and the one pod template
    kueue_written=(".spec.suspend", *kueue_pod_template(".spec.template")),
)
# JobSet, which Kubeflow Trainer makes for a TrainJob, and a collective-job with group
# restarts renders; Argo CD v3.5.1 ships no health check for it (resource_customizations/).
JOBSET = TrainingObject(
    "jobset.x-k8s.io/v1alpha2",
    "JobSet",
    health=(
        SHARED_HEALTH / "jobset.lua",
        SHARED_HEALTH / "replicated-jobs.lua",
        SHARED_HEALTH / "conditions.lua",
    ),
    # Kueue v0.19.2 (pkg/controller/jobs/jobset/jobset_controller.go:103-105 Suspend,
    # :138-173 RunWithPodSetsInfo, RestorePodSetsInfo): spec.suspend and every replicated
    # job's pod template
    kueue_written=(
        ".spec.suspend",
        *kueue_pod_template(".spec.replicatedJobs[]?.template.spec.template"),
    ),
    needs="a JobSet needs the JobSet controller, with its CRD and webhook (paddlegen is tested "
    "with JobSet v0.12.0; Kubeflow Trainer installs it too): a collective-job renders one for "
    "spec.run.restarts; without run.restarts it is a plain Indexed Job, which needs no "
    "controller",
)
# Volcano's PodGroup: no workload renders one, but under Volcano every job has one, made by an
# operator or by Volcano's podgroup controller for a batch Job's pods (workloads/base.py).
PODGROUP = TrainingObject(
    "scheduling.volcano.sh/v1beta1",
    "PodGroup",
    health=(SHARED_HEALTH / "podgroup.lua",),
)
# What a job may hold whatever its workload: the data Job, and Volcano's PodGroup.
ANY_WORKLOAD = (BATCH_JOB, PODGROUP)
