"""What Kueue writes into a queued training object, which Argo CD must neither diff nor undo.

The paths are each kind's own (``TrainingObject.kueue_written`` and ``kueue_written_always``,
paddlegen/workloads/objects.py and the workloads' folders), gathered from the registry.
"""

from __future__ import annotations

from typing import Any

from paddlegen.spec.scheduling import KUEUE_QUEUE_LABEL
from paddlegen.workloads import rendered_objects

# Argo CD turns each jqPathExpression into `del(<expression>)` (v3.5.1
# util/argo/normalizers/diff_normalizer.go:162): after `select(...)`, the paths are those of an
# object in a queue only, so a job paddlegen renders without Kueue keeps every field compared.
# With RespectIgnoreDifferences=true a sync also applies the live values of these fields
# (controller/sync.go:421-490 normalizeTargetResources): self-heal never re-suspends an
# admitted job or takes its flavor's nodeSelector away.
_QUEUED = f'select(.metadata.labels["{KUEUE_QUEUE_LABEL}"] != null) | '


def ignore_differences() -> list[dict[str, Any]]:
    """An Application's ``ignoreDifferences`` for what Kueue writes into training objects: one
    entry for each kind of training object the workloads render that Kueue writes into."""
    return [
        {
            "group": obj.group,
            "kind": obj.kind,
            "jqPathExpressions": [
                *(_QUEUED + path for path in obj.kueue_written),
                *obj.kueue_written_always,
            ],
        }
        for obj in rendered_objects()
        if obj.kueue_written or obj.kueue_written_always
    ]
