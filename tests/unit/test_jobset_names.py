"""The names JobSet's webhook checks bound a job's name where the webhook does: a collective-job
with run.restarts (its JobSet) and a trainjob (the JobSet Trainer makes of it) are refused by
rule name-length exactly where JobSet v0.12.0 refuses their JobSet
(pkg/webhooks/jobset_webhook.go:243-255: the last pod's `<jobset>-<replicated job>-<job
index>-<pod index>` and "-abcde" a DNS-1035 label of at most 63 characters)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import diagnostics, spec

# workload -> (the spec fields that make it run in a JobSet, its replicated job's name)
JOBSETS: dict[str, tuple[dict[str, Any], str]] = {
    "collective-job": ({"run": {"restarts": 2}}, "worker"),
    "trainjob": ({}, "node"),
}


def refused(workload: str, name: str, pods: int, jobset: bool = True) -> list[str]:
    fields = JOBSETS[workload][0] if jobset else {}
    data = spec(workload, metadata={"name": name}, worker={"replicas": pods}, **fields)
    return [d.message for d in diagnostics(data) if d.rule == "name-length"]


def webhook_accepts(workload: str, name: str, pods: int) -> bool:
    """JobSet's own check, as its webhook computes it (placement.GenPodName + "-abcde")."""
    _, replicated_job = JOBSETS[workload]
    return len(f"{name}-{replicated_job}-0-{pods - 1}-abcde") <= 63


@pytest.mark.parametrize("workload", sorted(JOBSETS))
@pytest.mark.parametrize("pods", [1, 2, 4, 8, 11])
def test_the_longest_name_accepted_is_the_webhooks(workload: str, pods: int) -> None:
    longest = next(n for n in range(63, 0, -1) if webhook_accepts(workload, "a" * n, pods))
    assert refused(workload, "a" * longest, pods) == []
    (message,) = refused(workload, "a" * (longest + 1), pods)
    assert not webhook_accepts(workload, "a" * (longest + 1), pods)
    assert message.endswith(
        "has 64 characters, more than 63, counting the 5 random characters (xxxxx) that end a "
        "pod's name, as JobSet's webhook does when it refuses the JobSet"
    )


@pytest.mark.parametrize(
    ("workload", "pods", "longest"),
    [
        ("collective-job", 1, 46),
        ("collective-job", 4, 46),
        ("collective-job", 8, 46),
        ("collective-job", 11, 45),
        ("trainjob", 2, 48),
        ("trainjob", 4, 48),
        ("trainjob", 11, 47),
    ],
)
def test_the_bounds_in_numbers(workload: str, pods: int, longest: int) -> None:
    assert refused(workload, "a" * longest, pods) == []
    assert refused(workload, "a" * (longest + 1), pods) != []


def test_the_message_names_the_pod_name_jobset_checks() -> None:
    (message,) = refused("collective-job", "a" * 47, 4)
    assert message.startswith(
        f"'{'a' * 47}' is too long for workload 'collective-job': the derived name "
        f"'{'a' * 47}-worker-0-3-xxxxx' has 64 characters"
    )


def test_without_restarts_a_collective_job_is_bound_by_its_pods_hostnames_alone() -> None:
    """No JobSet: the Job controller names pod i's host `<job>-<i>`, and truncates the random
    pod name itself."""
    found = [refused("collective-job", name, 4, jobset=False) for name in ("a" * 61, "a" * 62)]
    assert [len(messages) for messages in found] == [0, 1]
