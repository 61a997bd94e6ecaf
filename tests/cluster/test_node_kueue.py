"""Kueue on the real node (#27): a queued collective-job, or a queued TrainJob, that Kueue
preempts while it trains is requeued, not failed, and trains to completion once re-admitted
(when the job that preempted it leaves).

Kueue preempts by suspending the Job (the TrainJob: Trainer suspends its JobSet, JobSet the
Job, jobset v0.12.0 pkg/controllers/jobset_controller.go:562-573); the Job controller deletes
its pods, and Paddle's launcher ends on the SIGTERM with exit code 15. KWOK cannot show what
that exit code does to the Job (its pods have no process): here real ranks get the signal.
The low-priority job's first ranks wait before they train (HOLD_UNTIL, training/collective.py),
so they are still running when the high-priority one takes its quota; the test releases the
hold once they are gone, so the ranks admitted again train at once."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paddlegen.pipeline import build
from paddlegen.workloads.shared.launcher import QUEUED_STOP_EXIT_CODES
from paddlegen.workloads.trainjob.names import NODE
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
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    overrun,
    trained_in,
    wait_until_done,
)
from tests.cluster.test_node_trainjob import node_spec
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_trainjob import install_runtimes, ranks, trainjob_condition
from tests.cluster.training import assert_trained, program

OOM = "kq-oom"  # the job whose ranks run out of memory at every attempt
KEEP = "paddlegen.test/keep"  # the test's finalizer on the preempted ranks


@dataclass(frozen=True)
class Queued:
    """A workload as this test drives it: its spec, its ranks and their container, the Job
    that runs them, and the training object's kind, resource and final state."""

    workload: str
    spec: Callable[..., dict[str, Any]]
    ranks: Callable[[Kube, str, str], list[dict[str, Any]]]
    container: str
    kind: str  # the training object's (the Workload's owner)
    job: Callable[[str], str]  # the batch Job's name, from the training object's
    done: Callable[[Kube, str], str]  # "Complete", "Failed" or ""

    def low_and_high(self) -> tuple[str, str]:
        """The two jobs' names, each in the namespace of its name."""
        short = {"collective-job": "kq", "trainjob": "kq-tj"}[self.workload]
        return f"{short}-low", f"{short}-high"


def trainjob_done(kube: Kube, name: str) -> str:
    kinds = ("Complete", "Failed")
    return next((k for k in kinds if trainjob_condition(kube, name, name, k)), "")


WORKLOADS = {
    "collective-job": Queued(
        "collective-job",
        spec,
        pods,
        "paddle",
        "Job",
        lambda name: name,
        lambda kube, name: job_condition(kube, name, name),
    ),
    "trainjob": Queued(
        "trainjob",
        node_spec,
        ranks,
        NODE,
        "TrainJob",
        lambda name: f"{name}-{NODE}-0",
        trainjob_done,
    ),
}


@pytest.fixture(scope="module")
def queued(node: Kube) -> Kube:
    """The node with JobSet, Trainer and paddlegen's runtimes, and Kueue, one ClusterQueue of
    750m CPU (one job of two 250m ranks fits, two do not) with a LocalQueue `team` in each
    job's namespace, and the training program."""
    with_extras(node, ["jobset", "trainer", "kueue"])
    install_runtimes(node)
    flavor_and_priorities(node)
    namespaces = [name for w in WORKLOADS.values() for name in w.low_and_high()] + [OOM]
    queue(node, namespaces[0], "750m", *namespaces[1:])
    for namespace in namespaces:
        node.run("create", "configmap", "program", "-n", namespace,
                 f"--from-literal=train.py={program('collective')}")  # fmt: skip
    return node


def exit_codes(kube: Kube, w: Queued, name: str) -> list[int] | None:
    """The exit codes of the job's training containers, once every rank has stopped."""
    codes: list[Any] = [
        (c.get("state", {}).get("terminated") or {}).get("exitCode")
        for p in w.ranks(kube, name, name)
        for c in p["status"].get("containerStatuses", [])
        if c["name"] == w.container
    ]
    return codes if codes and None not in codes else None


@pytest.mark.node
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_preempted_job_is_requeued_and_trains_when_readmitted(
    queued: Kube, workload: str, tmp_path: Path
) -> None:
    kube, w = queued, WORKLOADS[workload]
    low, high = w.low_and_high()

    def render(data: dict[str, Any], priority: str) -> str:
        return build.manifest_stream([queued_render(data, "team", priority)])

    held = w.spec(low, 2, env=[{"name": "HOLD_UNTIL", "value": "/hold/released"}])
    tmp_path.chmod(0o755)  # the ranks' user looks into it
    folder = {"path": str(tmp_path), "type": "Directory"}
    held["spec"]["volumes"].append(
        {"name": "hold", "mountPath": "/hold", "readOnly": True, "hostPath": folder}
    )
    kube.apply(render(held, "low"))
    admitted(kube, low, w.kind, low)
    wait_for(
        f"{low}: both ranks running",
        lambda: [p["status"].get("phase") for p in w.ranks(kube, low, low)] == ["Running"] * 2,
        timeout=HANG_TIMEOUT,
    )
    first = {p["metadata"]["uid"] for p in w.ranks(kube, low, low)}
    # Held by a finalizer of the test's own, each stopped rank stays, Failed with its exit code,
    # until the Job controller has seen it (else it may be gone first: the controller drops
    # its own finalizer before it deletes a suspended Job's pods, job_controller.go:1284-1290).
    for name in sorted(p["metadata"]["name"] for p in w.ranks(kube, low, low)):
        keep = [{"op": "add", "path": "/metadata/finalizers/-", "value": KEEP}]
        kube.run("patch", "pod", name, "-n", low, "--type=json", "-p", json.dumps(keep))

    # The high-priority job takes the quota: Kueue evicts the low one and suspends it, and
    # its running ranks get SIGTERM. The Job is not failed by its pod failure policy.
    kube.apply(render(w.spec(high, 2), "high"))
    evicted = wait_for(
        f"{low} preempted", lambda: workload_condition(kube, low, w.kind, low, "Evicted")
    )
    assert evicted["reason"] == "Preempted", evicted
    wait_for(f"{low} suspended", lambda: suspended(kube, low, w.kind.lower(), low))
    stopped = wait_for(
        f"{low}'s ranks stopped", lambda: exit_codes(kube, w, low), timeout=HANG_TIMEOUT
    )
    # Paddle's launcher on SIGTERM (15), or killed at the end of the 5 s grace period (137);
    # either matched the exit-code rule before queued jobs ignored them (its FailureTarget:
    # "Container paddle for pod ... failed with exit code 137 matching FailJob rule at index 1")
    assert set(stopped) <= set(QUEUED_STOP_EXIT_CODES), stopped
    job = w.job(low)
    wait_for(
        f"the Job controller's count of {low}'s stopped ranks",
        lambda: not get(kube, low, "job", job)["status"].get("terminating"),
    )
    status = get(kube, low, "job", job)["status"]
    assert not [c for c in status.get("conditions", []) if c["type"] in (
        "FailureTarget", "Failed")], status  # fmt: skip
    assert status.get("failed", 0) == 0, status
    for pod in w.ranks(kube, low, low):
        kube.run("patch", "pod", pod["metadata"]["name"], "-n", low, "--type=merge",
                 "-p", '{"metadata": {"finalizers": []}}')  # fmt: skip
    wait_for(f"{low}'s first ranks gone", lambda: not w.ranks(kube, low, low), timeout=HANG_TIMEOUT)
    (tmp_path / "released").touch()

    # The high job leaves (deleted: its Workload goes with it, and its quota); the low one is
    # admitted again and trains, every rank anew: the training budget counts from its new
    # ranks, not from the queueing before them.
    kube.run("delete", w.kind.lower(), high, "-n", high, "--wait=false")
    wait_for(f"{low}'s new ranks", lambda: len(w.ranks(kube, low, low)) == 2, timeout=HANG_TIMEOUT)
    state, took, output = wait_until_done(kube, low, lambda: w.done(kube, low), w.container)
    assert state == "Complete", f"{low}: {overrun(kube, low, state, took, output)}"
    assert_trained(output, 2)
    again = w.ranks(kube, low, low)
    assert sorted(int(p["metadata"]["annotations"][INDEX]) for p in again) == [0, 1]
    assert not first & {p["metadata"]["uid"] for p in again}  # new pods, both ranks
    wait_for(
        f"{low}'s Workload Finished",
        lambda: workload_condition(kube, low, w.kind, low, "Finished"),
    )
    trained_in(took, "re-admitted, trained")


@pytest.mark.node
def test_a_queued_job_whose_ranks_run_out_of_memory_every_time_fails_in_bounded_attempts(
    queued: Kube,
) -> None:
    """Data-parallel ranks are alike in memory: when one runs out, the others do too, at the
    same step, at every attempt. On a node with cgroup v2 the kubelet has the OOM killer end
    the whole container (memory.oom.group), exit code 137, which a queued job's policy must
    not fail on (Kueue's preemption ends ranks with it too). The ranks here end with 137 at
    step 100 themselves (this node's cgroup v1 would kill only the training process). Each
    such end counts against backoffLimit (2 here; Kubernetes' default is 6), so the Job fails
    after two attempts, with no deadline, instead of starting its ranks again for ever."""
    kube, name = queued, OOM
    fault = [{"name": "EXIT_AT_STEP", "value": "100"}, {"name": "EXIT_CODE", "value": "137"}]
    data = spec(name, 2, env=fault, run={"backoffLimit": 2})
    kube.apply(build.manifest_stream([queued_render(data, "team")]))
    admitted(kube, name, "Job", name)

    def failed() -> dict[str, Any] | None:
        conditions = get(kube, name, "job", name)["status"].get("conditions", [])
        return next((c for c in conditions if (c["type"], c["status"]) == ("Failed", "True")), None)

    # Counted (BackoffLimitExceeded), not failed at once by the exit-code rule
    # (PodFailurePolicy), nor ignored (no end at all).
    condition = wait_for(f"{name} failed", failed, timeout=HANG_TIMEOUT)
    assert condition["reason"] == "BackoffLimitExceeded", condition
    status = get(kube, name, "job", name)["status"]
    assert status["failed"] > 2, status
    # Started again, and no more than the limit allows: every failed pod stays, the running
    # ones are deleted when the Job fails.
    made = Counter(p["metadata"]["annotations"][INDEX] for p in pods(kube, name, name))
    assert max(made.values()) == 2 and sum(made.values()) <= 4, made
    codes = [
        c["state"]["terminated"]["exitCode"]
        for p in pods(kube, name, name)
        for c in p["status"].get("containerStatuses", [])
        if c["name"] == "paddle" and "terminated" in c["state"]
    ]
    assert 137 in codes, codes
