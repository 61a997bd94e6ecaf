"""How the job is scheduled: its gang's size and priority under Volcano, and Kueue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.model import DEFAULT_REQUESTS, role_value
from paddlegen.spec.rule import Context, Finding, SpecRule, pod_count
from paddlegen.spec.scheduling import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL
from paddlegen.workloads import WORKLOADS


def _min_available(ctx: Context) -> Iterator[Finding]:
    wanted = ctx.spec.get("scheduling", {}).get("minAvailable")
    if wanted is None:
        return
    total = pod_count(ctx)
    if wanted > total:
        yield ctx.finding(
            ("spec", "scheduling", "minAvailable"),
            f"minAvailable {wanted} is more than the job's {total} pod{'s' if total != 1 else ''}",
            "the job could never be scheduled",
        )


MIN_AVAILABLE = SpecRule(
    "min-available",
    "`scheduling.minAvailable` is at most the job's pods",
    explanation=(
        "`scheduling.minAvailable` is how many pods Volcano must start together. More than the job "
        "has can never be met: the gang never starts."
    ),
    severity="error",
    silenceable=True,
    check=_min_available,
)


def _gang_of_pods(workload: str) -> bool:
    """Whether Volcano's group for ``workload``'s pods takes its priority from the pods: a
    batch Job's does; an operator puts the gang's on its PodGroup (its pods may have another),
    and a workload whose pods take no priorityClassName is workload-unsupported's."""
    given = WORKLOADS[workload]
    return not given.scheduling_policy and "priorityClassName" not in given.unsupported


def _priority_class_summary() -> str:
    gangs = [f"`{name}`" for name in WORKLOADS if _gang_of_pods(name)]
    return (
        f"under Volcano, a {', '.join(gangs[:-1])} or {gangs[-1]} pod's `priorityClassName` is "
        "the gang's (`scheduling.priorityClassName`): Volcano's group for the Job takes the pods'"
    )


def _priority_class(ctx: Context) -> Iterator[Finding]:
    """Under Volcano a batch Job's pods give the gang its priority (Volcano's PodGroup for the
    Job takes the pods'): a pod priority other than scheduling.priorityClassName would
    silently replace the gang's."""
    scheduling = ctx.spec.get("scheduling", {})
    gang = scheduling.get("priorityClassName")
    if gang is None or scheduling.get("scheduler") != "volcano" or not _gang_of_pods(ctx.workload):
        return
    places = [(("spec",), ctx.spec), *((("spec", r), body) for r, body in ctx.roles())]
    for path, body in places:
        own = body.get("priorityClassName")
        if own is not None and own != gang:
            yield ctx.finding(
                (*path, "priorityClassName"),
                f"priorityClassName {own!r} differs from the gang's {gang!r}: a "
                f"{ctx.workload}'s pods give Volcano's group for them its priority, so the "
                "gang's would be lost",
                "leave the pods' priorityClassName out (they carry the gang's), or set the same",
            )


PRIORITY_CLASS = SpecRule(
    "priority-class",
    _priority_class_summary,
    explanation=(
        "Under Volcano, the PodGroup Volcano makes for a batch Job takes its priority from the "
        "pods. A pod `priorityClassName` other than the gang's (`scheduling.priorityClassName`) "
        "would silently replace the gang's priority."
    ),
    severity="error",
    silenceable=True,
    check=_priority_class,
)


# Kueue with scheduler volcano is accepted, though Kueue has no vcjob integration: paddlegen
# renders no vcjob. Kueue holds the training object suspended; Volcano gang-schedules its pods
# once admitted (docs/scheduling.md#kueue-queues):
# - a batch Job: while suspended it has no pods, and Volcano's podgroup controller works from
#   pods (v1.15.1 pkg/controllers/podgroup/pg_controller_handler.go:59-72 addPod), so no
#   PodGroup exists; on admission the pods come with Kueue's nodeSelector and the controller
#   makes the Job's PodGroup, its minMember from the Job's group-min-member annotation
#   (:222-287), owned by the Job (:384, :504-509). Preempted, the Job is suspended again
#   (Kueue v0.19.2 pkg/controller/jobs/job/job_controller.go:165-167), its pods go, its
#   PodGroup stays, and the next admission's pods join it (get or create, :301-327).
# - a Kubeflow PaddleJob: training-operator v1.9.0 deletes the pods and the PodGroup while it
#   is suspended and makes them again when it resumes (pkg/controller.v1/common/job.go:146-170).
# - a TrainJob: Trainer v2.3.0's Volcano plugin writes the PodGroup again while the TrainJob
#   is suspended (pkg/runtime/framework/plugins/volcano/volcano.go:148-158).


# Kueue's default LocalQueue: in a namespace that has one, Kueue's webhook gives every Job
# without a queue label this one (sigs.k8s.io/kueue v0.19.2
# pkg/controller/jobframework/defaults.go:80-98, DefaultLocalQueueName in
# pkg/controller/constants/constants.go:27), so it would queue the data Job too.
_KUEUE_DEFAULT_QUEUE = "default"
_KUEUE_LABELS = (KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL)


def _kueue_labels(ctx: Context) -> Iterator[Finding]:
    """Kueue's labels only through spec.scheduling.kueue: in metadata.labels they would reach
    every object (the data Job too), in podLabels every pod, which Kueue's pod integration (on
    by default) would then queue one by one."""
    places: list[FieldPath] = [("metadata", "labels"), ("spec", "podLabels")]
    places += [("spec", role, "podLabels") for role, _ in ctx.roles()]
    for place in places:
        body: Any = ctx.data
        for key in place:
            body = body.get(key, {}) if isinstance(body, dict) else {}
        for label in _KUEUE_LABELS:
            if label in body:
                yield ctx.finding(
                    (*place, label),
                    f"{label} here would reach "
                    + ("every object, the data Job too" if place[0] == "metadata" else "the pods")
                    + ": Kueue reads it on the training object only",
                    "set spec.scheduling.kueue instead",
                    key=True,
                )


KUEUE_LABELS = SpecRule(
    "kueue-labels",
    "Kueue's labels (`kueue.x-k8s.io/queue-name`, `kueue.x-k8s.io/priority-class`) are set "
    "through `scheduling.kueue`, not in `metadata.labels` (every object, the data Job too) "
    "or `podLabels` (Kueue's pod integration would queue each pod)",
    explanation=(
        "Kueue's labels belong in `scheduling.kueue`. In `metadata.labels` they would reach every "
        "object, the data Job too; in `podLabels` every pod, which Kueue's pod integration would "
        "then queue one by one."
    ),
    severity="error",
    silenceable=True,
    check=_kueue_labels,
)


def _kueue_data_prep(ctx: Context) -> Iterator[Finding]:
    """Never a queue that takes the data Job too (docs/scheduling.md#kueue-queues)."""
    kueue = ctx.kueue
    if kueue is not None and "dataPrep" in ctx.spec and kueue["queue"] == _KUEUE_DEFAULT_QUEUE:
        yield ctx.finding(
            ("spec", "scheduling", "kueue", "queue"),
            "a LocalQueue named 'default' is Kueue's default queue: Kueue puts every Job of the "
            "namespace without a queue label in it, the data-preparation Job too, and a data "
            "Job that Kueue suspended and resumed reads as finished to Argo CD, so training "
            "would start before the data is ready",
            "name the LocalQueue otherwise, and have none named 'default' in the namespace",
        )


KUEUE_DATA_PREP = SpecRule(
    "kueue-data-prep",
    "a job with `dataPrep` is not queued in a LocalQueue named `default`: Kueue's default "
    "queue takes every Job of its namespace without a queue label, the data Job too, which "
    "Argo CD then reads as finished while it runs",
    explanation=(
        "A LocalQueue named `default` is Kueue's default queue: it takes every Job of its "
        "namespace without a queue label, paddlegen's data-preparation Job too, which Argo CD then "
        "reads as finished while it waits or runs."
    ),
    severity="error",
    silenceable=True,
    check=_kueue_data_prep,
)


def _kueue_requests(ctx: Context) -> Iterator[Finding]:
    """Kueue admits a job by what its pods request (limits where no request is set); a cpu or
    memory the spec leaves out is paddlegen's default request (spec/model.py DEFAULT_REQUESTS),
    and the queue's quota is charged that: reported once where the resources are (or would
    be) set, naming the roles that take them from there."""
    if ctx.kueue is None:
        return
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    found: dict[FieldPath, tuple[list[str], list[str]]] = {}
    for role, body in roles.items():
        resources = role_value(ctx.spec, body, "resources", {})
        given = {**resources.get("limits", {}), **resources.get("requests", {})}
        missing = [name for name in DEFAULT_REQUESTS if name not in given]
        if not missing:
            continue
        if "resources" in body:
            place: FieldPath = ("spec", role, "resources")
        else:
            place = ("spec", "resources") if "resources" in ctx.spec else ("spec",)
        found.setdefault(place, ([], missing))[0].append(role)
    several = len(WORKLOADS[ctx.workload].roles) > 1
    for place, (which, missing) in found.items():
        defaults = ", ".join(f"{name} {DEFAULT_REQUESTS[name]}" for name in missing)
        pods = f"the {', '.join(which)} pods" if several else "the pods"
        yield ctx.finding(
            place,
            f"Kueue charges the queue's quota what the pods request, and {pods} request "
            f"paddlegen's default {defaults}: the spec gives none",
            "set resources.requests (or limits) for " + " and ".join(missing),
            key=True,
        )


KUEUE_REQUESTS = SpecRule(
    "kueue-requests",
    "under Kueue, every role gives its cpu and memory: Kueue charges the queue's quota what "
    "the pods request, paddlegen's default requests (cpu 500m, memory 1Gi) otherwise",
    explanation=(
        "Kueue charges the queue's quota what the pods request. A role that gives no cpu or memory "
        "gets paddlegen's default requests, and the quota is charged those instead of what the job "
        "needs."
    ),
    severity="warning",
    silenceable=True,
    check=_kueue_requests,
)


def _topology_unhonoured(ctx: Context) -> Iterator[Finding]:
    """spec.scheduling.topology is honoured by Kueue (a queued job) or by Volcano's network
    topology on a PodGroup that Volcano's podgroup controller makes (workloads/base.py
    topology_annotations); anywhere else the job would run spread out with no word of it."""
    scheduling = ctx.spec.get("scheduling", {})
    if "topology" not in scheduling or ctx.kueue is not None:
        return
    place = ("spec", "scheduling", "topology")
    hint = "queue the job with scheduling.kueue: Kueue's topology-aware scheduling places it"
    if scheduling.get("scheduler") != "volcano":
        yield ctx.finding(
            place,
            "nothing would keep the ranks in one domain: Kueue places a job by topology only "
            "when it queues it (scheduling.kueue), Volcano only a gang (scheduler: volcano)",
            f"{hint}, or gang-schedule it with scheduler: volcano",
            key=True,
        )
        return
    maker = WORKLOADS[ctx.workload].no_network_topology
    if maker:
        yield ctx.finding(
            place,
            f"a {ctx.workload}'s Volcano PodGroup is made by {maker}, which gives it no "
            "network topology: Volcano would not keep the ranks in one domain",
            hint,
            key=True,
        )


TOPOLOGY_UNHONOURED = SpecRule(
    "topology-unhonoured",
    "`scheduling.topology` needs Kueue (`scheduling.kueue`) or a Volcano gang whose PodGroup "
    "Volcano makes itself (`job`, `distributed-job`, `collective-job`): nothing else keeps "
    "the ranks in one domain",
    explanation=(
        "`scheduling.topology` is honoured by Kueue, or by a Volcano gang whose PodGroup Volcano "
        "makes itself. Anywhere else the job would run spread out without a word."
    ),
    severity="error",
    silenceable=True,
    check=_topology_unhonoured,
)


def _topology_tier(ctx: Context) -> Iterator[Finding]:
    """Volcano's domains are HyperNodes of numbered tiers, which the cluster admin defines
    (by node names, regular expressions or node labels: HyperNode spec.members): no label name
    says which tier is its domain, so the spec does."""
    scheduling = ctx.spec.get("scheduling", {})
    topology = scheduling.get("topology")
    if (
        topology is None
        or scheduling.get("scheduler") != "volcano"
        or ctx.kueue is not None
        or WORKLOADS[ctx.workload].no_network_topology
        or "hyperNodeTier" in topology
    ):
        return
    label = topology.get("required", topology.get("preferred"))
    yield ctx.finding(
        ("spec", "scheduling", "topology"),
        f"Volcano places a gang by the tiers of its HyperNodes, not by node labels: which "
        f"tier's HyperNodes are the domains of {label!r} is this cluster's own",
        "set hyperNodeTier to that tier: `kubectl get hypernodes` shows each one's",
        key=True,
    )


TOPOLOGY_TIER = SpecRule(
    "topology-tier",
    "a Volcano gang with `scheduling.topology` gives `hyperNodeTier`: the tier of the "
    "HyperNodes that are the label's domains, which no label name says",
    explanation=(
        "Volcano's topology domains are HyperNodes of numbered tiers that the cluster admin "
        "defines. No label name says which tier is the label's domain, so a Volcano gang with "
        "`scheduling.topology` gives `hyperNodeTier`."
    ),
    severity="error",
    silenceable=True,
    check=_topology_tier,
)
