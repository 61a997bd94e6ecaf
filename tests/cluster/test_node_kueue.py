"""Kueue on the real node (#27): a queued collective-job that Kueue preempts while it trains is
requeued, not failed, and trains to completion once re-admitted.

Kueue preempts by suspending the Job; the Job controller deletes its pods, and Paddle's
launcher ends on the SIGTERM with exit code 15. KWOK cannot show what that exit code does to
the Job (its pods have no process): here real ranks get the signal. The low-priority job waits
HOLD_SECONDS before it trains (training/collective.py), so it is still running when the
high-priority one takes its quota."""

from __future__ import annotations

import json
from typing import Any

import pytest

from paddlegen import api
from paddlegen.workloads.collective import QUEUED_STOP_EXIT_CODES
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_kueue import (
    admitted,
    flavor_and_priorities,
    queue,
    queued_render,
    suspended,
    workload_condition,
)
from tests.cluster.test_node_collective import INDEX, job_condition, pods, spec
from tests.cluster.test_node_operators import wait_until_done
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.training import assert_trained, program

LOW, HIGH = "kq-low", "kq-high"  # each job in the namespace of its name
HOLD_SECONDS = "15"  # the low job's first run must still be running when it is preempted
KEEP = "paddlegen.test/keep"  # the test's finalizer on the preempted ranks


@pytest.fixture(scope="module")
def queued(node: Kube) -> Kube:
    """The node with Kueue, one ClusterQueue of 750m CPU (one job of two 250m ranks fits, two
    do not) with a LocalQueue `team` in each job's namespace, and the training program."""
    with_extras(node, ["kueue"])
    flavor_and_priorities(node)
    queue(node, LOW, "750m", HIGH)
    for namespace in (LOW, HIGH):
        node.run("create", "configmap", "program", "-n", namespace,
                 f"--from-literal=train.py={program('collective')}")  # fmt: skip
    return node


def job(name: str, priority: str, **extra: Any) -> api.Rendered:
    return queued_render(spec(name, 2, **extra), "team", priority)


def exit_codes(kube: Kube) -> list[int] | None:
    """The exit codes of the low job's training containers, once every rank has stopped."""
    codes = [
        (c.get("state", {}).get("terminated") or {}).get("exitCode")
        for p in pods(kube, LOW, LOW)
        for c in p["status"].get("containerStatuses", [])
        if c["name"] == "paddle"
    ]
    return codes if codes and None not in codes else None


def failed_or_done(kube: Kube, name: str) -> str:
    return job_condition(kube, name, name)


@pytest.mark.node
def test_a_preempted_collective_job_is_requeued_and_trains_when_readmitted(queued: Kube) -> None:
    kube = queued
    hold = {"env": [{"name": "HOLD_SECONDS", "value": HOLD_SECONDS}]}
    kube.apply(api.manifest_stream([job(LOW, "low", **hold)]))
    admitted(kube, LOW, "Job", LOW)
    wait_for(
        f"{LOW}: both ranks running",
        lambda: [p["status"].get("phase") for p in pods(kube, LOW, LOW)] == ["Running"] * 2,
        timeout=90,
    )
    first = {p["metadata"]["uid"] for p in pods(kube, LOW, LOW)}
    # Held by a finalizer of the test's own, each stopped rank stays, Failed with its exit code,
    # until the Job controller has seen it (else it may be gone first: the controller drops
    # its own finalizer before it deletes a suspended Job's pods, job_controller.go:1284-1290).
    for name in sorted(p["metadata"]["name"] for p in pods(kube, LOW, LOW)):
        keep = [{"op": "add", "path": "/metadata/finalizers/-", "value": KEEP}]
        kube.run("patch", "pod", name, "-n", LOW, "--type=json", "-p", json.dumps(keep))

    # The high-priority job takes the quota: Kueue evicts the low one and suspends its Job,
    # whose running ranks get SIGTERM. The Job is not failed by its pod failure policy.
    kube.apply(api.manifest_stream([job(HIGH, "high")]))
    evicted = wait_for(
        f"{LOW} preempted", lambda: workload_condition(kube, LOW, "Job", LOW, "Evicted")
    )
    assert evicted["reason"] == "Preempted", evicted
    wait_for(f"{LOW} suspended", lambda: suspended(kube, LOW, "job", LOW))
    stopped = wait_for(f"{LOW}'s ranks stopped", lambda: exit_codes(kube), timeout=90)
    # Paddle's launcher on SIGTERM (15), or killed at the end of the 5 s grace period (137);
    # either matched the exit-code rule before queued jobs ignored them (its FailureTarget:
    # "Container paddle for pod ... failed with exit code 137 matching FailJob rule at index 1")
    assert set(stopped) <= set(QUEUED_STOP_EXIT_CODES), stopped
    wait_for(
        f"the Job controller's count of {LOW}'s stopped ranks",
        lambda: not get(kube, LOW, "job", LOW)["status"].get("terminating"),
    )
    low = get(kube, LOW, "job", LOW)
    assert not [c for c in low["status"].get("conditions", []) if c["type"] in (
        "FailureTarget", "Failed")], low["status"]  # fmt: skip
    assert low["status"].get("failed", 0) == 0, low["status"]
    for pod in pods(kube, LOW, LOW):
        kube.run("patch", "pod", pod["metadata"]["name"], "-n", LOW, "--type=merge",
                 "-p", '{"metadata": {"finalizers": []}}')  # fmt: skip
    wait_for(f"{LOW}'s first ranks gone", lambda: not pods(kube, LOW, LOW), timeout=90)

    # The high job trains; then the low one is admitted again and trains, every rank anew.
    state, took, output = wait_until_done(kube, HIGH, lambda: failed_or_done(kube, HIGH))
    assert state == "Complete", f"{HIGH}: {state or 'not done'} after {took:.0f} s:\n{output}"
    assert_trained(output, 2)
    state, took, output = wait_until_done(kube, LOW, lambda: failed_or_done(kube, LOW))
    assert state == "Complete", f"{LOW}: {state or 'not done'} after {took:.0f} s:\n{output}"
    assert_trained(output, 2)
    ranks = pods(kube, LOW, LOW)
    assert sorted(int(p["metadata"]["annotations"][INDEX]) for p in ranks) == [0, 1]
    assert not first & {p["metadata"]["uid"] for p in ranks}  # new pods, both ranks
    wait_for(
        f"{LOW}'s Workload Finished", lambda: workload_condition(kube, LOW, "Job", LOW, "Finished")
    )
