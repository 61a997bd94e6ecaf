"""spec.scheduling.kueue: Kueue's labels on the training object only, in every queued workload."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.spec.scheduling import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL
from paddlegen.workloads import WORKLOADS
from tests.builders import KUEUE, KUEUE_WORKLOADS, kueue_spec, rendered_objects
from tests.helpers import pod_templates


def objects(workload: str, scheduling: Any = KUEUE) -> dict[tuple[str, str], Any]:
    return rendered_objects(kueue_spec(workload, scheduling))


def keys(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for value in obj.values() for k in keys(value)}
    if isinstance(obj, list):
        return {k for value in obj for k in keys(value)}
    return set()


@pytest.mark.parametrize("workload", KUEUE_WORKLOADS)
def test_only_the_training_object_carries_the_queue_and_priority_labels(workload):
    found = objects(workload)
    kind = WORKLOADS[workload].kind_name
    labelled = {
        key
        for key, obj in found.items()
        if KUEUE_QUEUE_LABEL in obj["metadata"]["labels"]
        or KUEUE_PRIORITY_LABEL in obj["metadata"]["labels"]
    }
    assert labelled == {(kind, "demo")}
    labels = found[kind, "demo"]["metadata"]["labels"]
    assert (labels[KUEUE_QUEUE_LABEL], labels[KUEUE_PRIORITY_LABEL]) == ("team-a", "high")
    # the data Job is out of the queue: Kueue leaves a Job without the label alone
    # (manageJobsWithoutQueueName false, its default), so Argo CD waits for it to finish
    assert {("Job", "demo-data"), ("ConfigMap", "demo-run")} <= set(found)
    assert KUEUE_QUEUE_LABEL not in found["Job", "demo-data"]["metadata"]["labels"]
    # no pod carries them: Kueue's pod integration would queue each such pod on its own
    for template in pod_templates(list(found.values())):
        labels = template["metadata"].get("labels", {})
        assert not set(labels) & {KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL}


@pytest.mark.parametrize("workload", KUEUE_WORKLOADS)
def test_paddlegen_never_renders_suspend_or_managed_by(workload):
    # Kueue's webhook suspends on create and its controller resumes on admission; managedBy
    # is MultiKueue's: a value in Git would fight them (and managedBy is immutable).
    for obj in objects(workload).values():
        assert not keys(obj) & {"suspend", "managedBy"}


def test_the_priority_class_is_optional():
    labels = objects("job", {"kueue": {"queue": "team-a"}})["Job", "demo"]["metadata"]["labels"]
    assert labels[KUEUE_QUEUE_LABEL] == "team-a"
    assert KUEUE_PRIORITY_LABEL not in labels


def test_without_kueue_no_object_carries_its_labels():
    for obj in objects("collective-job", None).values():
        assert not keys(obj["metadata"]) & {KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL}


def test_a_queued_collective_job_counts_the_ranks_kueues_preemption_stops():
    """Kueue preempts by suspending the Job; its pods end with no DisruptionTarget and any
    exit code (Paddle's launcher 15 on SIGTERM, 137 when the grace period ends first, a
    shell-run program 143, a rank whose peer with the launcher's store stopped first 1), and
    the Job controller's FailJob scan would match them though a suspension's are never
    counted: a queued job counts a failed rank against backoffLimit instead (an OOM at every
    attempt still ends the job). An eviction still fails it at once."""
    rules = objects("collective-job")["Job", "demo"]["spec"]["podFailurePolicy"]["rules"]
    assert [(r["action"], r.get("onExitCodes")) for r in rules] == [
        ("FailJob", None),
        ("Count", {"containerName": "paddle", "operator": "NotIn", "values": [0]}),
    ]
    assert rules[0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]
    unqueued = objects("collective-job", None)["Job", "demo"]["spec"]["podFailurePolicy"]["rules"]
    assert [r["action"] for r in unqueued] == ["FailJob", "FailJob"]
