"""What Kueue writes into a queued training object, which Argo CD must neither diff nor undo."""

from __future__ import annotations

from typing import Any

from paddlegen.spec.model import KUEUE_QUEUE_LABEL

# Argo CD turns each jqPathExpression into `del(<expression>)` (v3.5.1
# util/argo/normalizers/diff_normalizer.go:162): after `select(...)`, the paths are those of an
# object in a queue only, so a job paddlegen renders without Kueue keeps every field compared.
# With RespectIgnoreDifferences=true a sync also applies the live values of these fields
# (controller/sync.go:421-490 normalizeTargetResources): self-heal never re-suspends an
# admitted job or takes its flavor's nodeSelector away.
_QUEUED = f'select(.metadata.labels["{KUEUE_QUEUE_LABEL}"] != null) | '
_KUEUE_PREFIX = "kueue.x-k8s.io/"


def _pod_template(template: str) -> list[str]:
    """What Kueue merges into a pod template on admission and restores on eviction (sigs.k8s.io/
    kueue v0.19.2 pkg/podset/podset.go:181-238 Merge, RestorePodSpec): the flavor's node labels
    as nodeSelector, its tolerations, scheduling gates, and labels and annotations of its own
    (kueue.x-k8s.io/podset, pkg/controller/jobframework/reconciler.go:1756)."""
    return [
        f"{template}.spec.nodeSelector",
        f"{template}.spec.tolerations",
        f"{template}.spec.schedulingGates",
        _kueue_keys(f"{template}.metadata.labels"),
        _kueue_keys(f"{template}.metadata.annotations"),
    ]


def _kueue_keys(mapping: str) -> str:
    """The keys of ``mapping`` in Kueue's own domain, as a path (the key generator in the
    brackets reads the object itself)."""
    return f'{mapping}[({mapping} // {{}} | keys[] | select(startswith("{_KUEUE_PREFIX}")))]'


# (group, kind) -> the fields Kueue writes, as jq paths from the object.
_WRITTEN: dict[tuple[str, str], list[str]] = {
    # batch/v1 Job (pkg/controller/jobs/job/job_controller.go:165-167 Suspend, :377-391
    # RunWithPodSetsInfo): spec.suspend and the one pod template
    ("batch", "Job"): [".spec.suspend", *_pod_template(".spec.template")],
    # TrainJob (pkg/controller/jobs/trainjob/trainjob_controller.go:130-136, :243-288): its
    # spec.suspend; its runtime patch is below
    ("trainer.kubeflow.org", "TrainJob"): [".spec.suspend"],
    # Kubeflow PaddleJob (pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go
    # :55-72): runPolicy.suspend and every replica's pod template
    ("kubeflow.org", "PaddleJob"): [
        ".spec.runPolicy.suspend",
        *_pod_template(".spec.paddleReplicaSpecs[]?.template"),
    ],
}


# (group, kind) -> what Kueue writes into every such object, queued or not, as jq paths. Its
# webhook appends a runtime patch of its own (manager kueue.x-k8s.io/manager) to every TrainJob
# it sees (pkg/controller/jobs/trainjob/trainjob_webhook.go:91-102), and fills it with the pod
# template's share on admission (trainjob_controller.go:76, :243-288): in a cluster with Kueue
# an unqueued TrainJob would read OutOfSync, and self-heal would take the patch away.
_WRITTEN_ALWAYS: dict[tuple[str, str], list[str]] = {
    ("trainer.kubeflow.org", "TrainJob"): [
        '.spec.runtimePatches[]? | select(.manager == "kueue.x-k8s.io/manager")',
    ],
}


def ignore_differences() -> list[dict[str, Any]]:
    """An Application's ``ignoreDifferences`` for what Kueue writes into training objects."""
    return [
        {
            "group": group,
            "kind": kind,
            "jqPathExpressions": [
                *(_QUEUED + path for path in paths),
                *_WRITTEN_ALWAYS.get((group, kind), ()),
            ],
        }
        for (group, kind), paths in _WRITTEN.items()
    ]
