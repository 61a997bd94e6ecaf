"""Group restarts on the real node with JobSet v0.12.0: a `collective-job` with `run.restarts`
and `spec.checkpoint` whose ranks (training/checkpointed.py) save every 20 steps on a hostPath
(one node: every rank sees it).

- a rank that crashes once, or whose pod is deleted mid-run: every rank starts again, resumes
  from the checkpoint and ends with the weights of an unfaulted run;
- a rank that crashes at every attempt: test_node_argocd_restarts.py, under Argo CD;
- a queued job whose ranks end as the OOM killer ends them (137) at every attempt, no
  deadline: failed after restarts + 1 attempts, never started again for ever;
- a `trainjob` whose rank crashes once, and one whose rank's pod is deleted mid-run, on its
  TrainingRuntime of its own (Trainer v2.3.0): the same as a collective-job;
- a `trainjob` whose first attempt hangs: its deadline, each attempt's, ends that attempt and
  the next resumes and completes;
- a queued job Kueue preempts mid-run: admitted again, it resumes from the checkpoint with
  the weights of an unfaulted run, no restart used.

The jobs that need no hand of the tests (the unfaulted run, the crashes, the hang, the job
out of memory), and the trainjob whose pod the first test deletes, train side by side from the
module's start. The time from a pod deleted to every
rank training again, measured with that job alone on the node, goes to benchmarks/node.py
(trained_in), not into a test."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from paddlegen.pipeline import build
from paddlegen.workloads.shared.jobset import RESTART_ATTEMPT
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_kueue import (
    admitted,
    flavor_and_priorities,
    queue,
    queued_render,
    suspended,
    workload_condition,
)
from tests.cluster.test_node_collective import INDEX, spec
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    get,
    logs,
    overrun,
    render,
    trained_in,
    wait_until_done,
)
from tests.cluster.test_paddleflow import wait_for
from tests.cluster.training import PARAMETERS, program

pytestmark = pytest.mark.node

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
RESUMED = re.compile(r"^rank (\d+)/2 attempt (\d+) resumed at step (\d+)$", re.M)
OOM = "rs-oom"
LOW, HIGH = "rs-low", "rs-high"  # a job Kueue preempts, and the one it preempts it for


CLEAN = "rs-clean"  # the run without a fault, whose weights every resumed run must end with
CRASH, TRAINJOB = "rs-crash", "rs-tj"  # rank 1 crashes once: a collective-job, a trainjob
TJ_DELETED = "rs-tj-delete"  # a trainjob whose rank 1's pod is deleted mid-run
TJ_HUNG = "rs-tj-hung"  # a trainjob whose ranks hang in its first attempt
ATTEMPT_DEADLINE = 120  # seconds: an attempt from its pods' creation on the busy node, in 60


@pytest.fixture(scope="module")
def jobsets(node: Kube, tmp_path_factory: pytest.TempPathFactory) -> Kube:
    """The node with JobSet, Trainer and Kueue (one ClusterQueue of 750m CPU, a LocalQueue
    `team` in the queued jobs' namespaces), and the jobs that need no hand of the tests
    started together, so that they train side by side: the run without a fault
    (``unfaulted`` waits for it), the crashes, the hang and the job out of memory."""
    with_extras(node, ["jobset", "trainer", "kueue"])
    flavor_and_priorities(node)
    queue(node, OOM, "750m", LOW, HIGH)
    # The hung trainjob first, alone until its first checkpoint is whole: its attempt's
    # deadline counts from the Job's start, and on the node busy with the others it can run
    # out before the attempt reaches its hang, the test then proving nothing of one.
    hung = tmp_path_factory.mktemp(TJ_HUNG)
    start(node, hung_once(hung))
    checkpoint = hung / TJ_HUNG / "latest"
    wait_for(f"{TJ_HUNG}: its first checkpoint", checkpoint.exists, timeout=HANG_TIMEOUT)
    crash = {"FAULT_RANK": "1", "FAULT_STEP": "150", "FAULT_ATTEMPTS": "0", "FAULT_CODE": "3"}
    start(node, restarting(CLEAN, tmp_path_factory.mktemp(CLEAN), 2))
    start(node, restarting(CRASH, tmp_path_factory.mktemp(CRASH), 2, **crash))
    start(node, as_trainjob(restarting(TRAINJOB, tmp_path_factory.mktemp(TRAINJOB), 2, **crash)))
    slow = {"STEP_SECONDS": "0.05"}  # still training when its first test deletes a pod
    start(node, as_trainjob(restarting(TJ_DELETED, tmp_path_factory.mktemp(TJ_DELETED), 2, **slow)))
    start(node, out_of_memory(tmp_path_factory.mktemp(OOM)), queued=True)
    return node


def hung_once(folder: Path) -> dict[str, Any]:
    """A trainjob whose ranks all hang at step 30 of its first attempt (soon after the start,
    so that they hang on a busy node too), as on a stalled input pipeline: no collective is
    left waiting to time out (one rank alone hanging ended the other's wait with an error
    first in one run of two), so only the deadline ends the attempt. It restarts once, each
    attempt given ATTEMPT_DEADLINE."""
    data = every_rank_faulty(restarting(TJ_HUNG, folder, 1, FAULT_STEP="30",
                                        FAULT_ATTEMPTS="0", FAULT_CODE="hang"))  # fmt: skip
    data = as_trainjob(data)
    data["spec"]["run"]["activeDeadlineSeconds"] = ATTEMPT_DEADLINE
    return data


def out_of_memory(folder: Path) -> dict[str, Any]:
    """Both ranks end with 137 at step 30 at every attempt, as the OOM killer ends
    data-parallel ranks on cgroup v2; one restart, no deadline."""
    return every_rank_faulty(
        restarting(OOM, folder, 1, FAULT_STEP="30", FAULT_ATTEMPTS="all", FAULT_CODE="137")
    )


def every_rank_faulty(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every rank the faulty one (FAULT_RANK its own)."""
    data["spec"]["command"] = [
        "sh", "-c", 'export FAULT_RANK="$PADDLE_RANK"; exec "$0" "$@"',
        "python3", "-m", "paddle.distributed.launch",
    ]  # fmt: skip
    return data


def restarting(name: str, folder: Path, restarts: int, **env: str) -> dict[str, Any]:
    """A collective-job of 2 ranks in a namespace of its name that runs checkpointed.py,
    restarting its group up to ``restarts`` times, its checkpoints in ``folder`` (a hostPath),
    ``env`` its faults."""
    data = spec(name, 2, env=[{"name": k, "value": v} for k, v in env.items()])
    data["spec"]["volumes"].append(
        {"name": "checkpoints", "mountPath": "/checkpoints",
         "hostPath": {"path": str(folder), "type": "DirectoryOrCreate"}}
    )  # fmt: skip
    data["spec"]["checkpoint"] = {"volume": "checkpoints"}
    data["spec"]["run"] = {"restarts": restarts}
    data["ignore"] = [{"rule": "checkpoint-volume", "reason": "a hostPath: one node here"}]
    return data


def as_trainjob(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a trainjob: the same pods, on a TrainingRuntime of its own. No
    imagePullPolicy: a TrainJob cannot set it; the tagged image is on the node."""
    data["spec"]["workload"] = "trainjob"
    del data["spec"]["imagePullPolicy"]
    return data


def start(kube: Kube, data: dict[str, Any], queued: bool = False, priority: str = "") -> str:
    name = data["metadata"]["name"]
    if not queued:
        kube.run("create", "namespace", name)
    kube.run("create", "configmap", "program", "-n", name,
             f"--from-literal=train.py={program('checkpointed')}")  # fmt: skip
    rendered = queued_render(data, "team", priority) if queued else render(data)
    kube.apply(build.manifest_stream([rendered]))
    return name


def jobset(kube: Kube, name: str) -> dict[str, Any]:
    return get(kube, name, "jobset", name) or {}


def final_state(kube: Kube, name: str) -> str:
    conditions = jobset(kube, name).get("status", {}).get("conditions", [])
    true = [c["type"] for c in conditions if c["status"] == "True"]
    return next((t for t in true if t in ("Completed", "Failed")), "")


def trainjob_state(kube: Kube, name: str) -> str:
    conditions = (get(kube, name, "trainjob", name) or {}).get("status", {}).get("conditions", [])
    true = [c["type"] for c in conditions if c["status"] == "True"]
    return next((t for t in true if t in ("Complete", "Failed")), "")


def ranks(kube: Kube, name: str) -> list[dict[str, Any]]:
    found = get(kube, name, "pods", "-l", f"{JOBSET_NAME}={name}") or {"items": []}
    return [p for p in found["items"] if not p["metadata"].get("deletionTimestamp")]


def weights(output: dict[str, str]) -> set[str]:
    """What the ranks learned, as printed: one value when they agree."""
    return {values for _, _, values in PARAMETERS.findall("\n".join(output.values()))}


def complete(kube: Kube, name: str) -> tuple[float, dict[str, str]]:
    state, took, output = wait_until_done(kube, name, lambda: final_state(kube, name))
    assert state == "Completed", overrun(kube, name, state, took, output)
    return took, output


@pytest.fixture(scope="module")
def unfaulted(jobsets: Kube) -> Callable[[], str]:
    """The weights the run without a fault ended with, waited for when first asked."""
    found: list[str] = []

    def learned() -> str:
        if not found:
            _, output = complete(jobsets, CLEAN)
            found.extend(weights(output))
        (only,) = found
        return only

    return learned


def lifetime(obj: dict[str, Any], condition: str) -> float:
    """From the object's creation to its ``condition``, as the API server has them: a job
    that ended before its test looked."""
    when = [c["lastTransitionTime"] for c in obj["status"]["conditions"] if c["type"] == condition]
    end, begun = (
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        for stamp in (when[0], obj["metadata"]["creationTimestamp"])
    )
    return (end - begun).total_seconds()


def delete_rank_one_at_step_100(kube: Kube, name: str, container: str = "paddle") -> float:
    """Delete rank 1's pod once it has logged step 100; when, by the monotonic clock."""

    def rank_one_at_step_100() -> str:
        found = [p for p in ranks(kube, name) if p["metadata"]["annotations"][INDEX] == "1"]
        log = logs(kube, name, container).get(found[0]["metadata"]["name"], "") if found else ""
        return found[0]["metadata"]["name"] if "step 100 loss" in log else ""

    victim = wait_for(f"{name}: rank 1 at step 100", rank_one_at_step_100, timeout=HANG_TIMEOUT)
    kube.run("delete", "pod", victim, "-n", name, "--wait=false")
    return time.monotonic()


def resumed_once_from_one_checkpoint(kube: Kube, name: str, output: dict[str, str]) -> None:
    """One restart, after which both ranks resumed from the same checkpoint, past step 100."""
    assert jobset(kube, name)["status"]["restarts"] == 1
    steps = {int(s) for _, a, s in RESUMED.findall("\n".join(output.values())) if a == "1"}
    assert len(steps) == 1 and 100 <= steps.pop() < 300, output


def test_a_trainjob_rank_whose_pod_is_deleted_restarts_the_group_which_resumes(
    jobsets: Kube, unfaulted: Callable[[], str]
) -> None:
    """First in the module: its trainjob trains from the module's start."""
    name = TJ_DELETED
    delete_rank_one_at_step_100(jobsets, name, "node")
    state, took, output = wait_until_done(
        jobsets, name, lambda: trainjob_state(jobsets, name), "node"
    )
    assert state == "Complete", overrun(jobsets, name, state, took, output)
    resumed_once_from_one_checkpoint(jobsets, name, output)
    assert weights(output) == {unfaulted()}


def test_a_rank_that_crashes_once_restarts_the_group_which_resumes(
    jobsets: Kube, unfaulted: Callable[[], str]
) -> None:
    name = CRASH
    _, output = complete(jobsets, name)
    status = jobset(jobsets, name)["status"]
    assert status["restarts"] == 1, status
    # the second attempt's ranks, both from the checkpoint before the crash (step 140)
    resumed = sorted(RESUMED.findall("\n".join(output.values())))
    assert resumed == [("0", "1", "140"), ("1", "1", "140")], output
    assert {p["metadata"]["annotations"][RESTART_ATTEMPT] for p in ranks(jobsets, name)} == {"1"}
    assert weights(output) == {unfaulted()}
    trained_in(lifetime(jobset(jobsets, name), "Completed"), "a crash, restarted, resumed")


def test_a_rank_whose_pod_is_deleted_restarts_the_group_which_resumes(
    jobsets: Kube, tmp_path: Path, unfaulted: Callable[[], str]
) -> None:
    # alone on the node, so that the time from the fault to training is the restart's own
    for early in (CLEAN, CRASH, OOM):
        wait_for(f"{early} done", lambda e=early: final_state(jobsets, e), timeout=HANG_TIMEOUT)
    for early in (TRAINJOB, TJ_DELETED, TJ_HUNG):
        wait_for(f"{early} done", lambda e=early: trainjob_state(jobsets, e), timeout=HANG_TIMEOUT)
    name = start(jobsets, restarting("rs-delete", tmp_path, 2, STEP_SECONDS="0.05"))
    deleted = delete_rank_one_at_step_100(jobsets, name)

    def training_again() -> bool:
        text = "\n".join(logs(jobsets, name).values())
        return len({r for r, a, _ in RESUMED.findall(text) if a == "1"}) == 2

    wait_for(f"{name}: every rank training again", training_again, timeout=HANG_TIMEOUT)
    trained_in(time.monotonic() - deleted, "from a deleted pod to every rank training again")
    took, output = complete(jobsets, name)
    resumed_once_from_one_checkpoint(jobsets, name, output)
    assert weights(output) == {unfaulted()}


def test_a_queued_job_out_of_memory_at_every_attempt_fails_after_its_restarts(
    jobsets: Kube,
) -> None:
    """``out_of_memory``: a queued job counts 137 (a suspension's are not counted), its Job
    fails on the first (backoffLimit 0), and the JobSet's restarts run out, no deadline
    needed."""
    name = OOM
    state, took, output = wait_until_done(jobsets, name, lambda: final_state(jobsets, name))
    assert state == "Failed", overrun(jobsets, name, state, took, output)
    status = jobset(jobsets, name)["status"]
    assert status["restarts"] == 1, status
    job = get(jobsets, name, "job", f"{name}-worker-0")
    reasons = {c["reason"] for c in job["status"]["conditions"] if c["type"] == "Failed"}
    assert reasons <= {"BackoffLimitExceeded", "PodFailurePolicy"}, job["status"]
    trained_in(lifetime(jobset(jobsets, name), "Failed"), "out of memory at every attempt, failed")


def test_a_trainjob_whose_rank_crashes_once_restarts_the_group_which_resumes(
    jobsets: Kube, unfaulted: Callable[[], str]
) -> None:
    """The same fault on a trainjob: its TrainingRuntime's JobSet restarts the group."""
    trainjob = trainjob_resumed_once(jobsets, TRAINJOB, "140", unfaulted())
    trained_in(lifetime(trainjob, "Complete"), "a trainjob: a crash, restarted, resumed")


def trainjob_resumed_once(kube: Kube, name: str, step: str, learned: str) -> dict[str, Any]:
    """The trainjob ``name`` once Complete: restarted once, both ranks of the second attempt
    resumed at ``step``, ending with the weights ``learned`` without a fault."""
    state, took, output = wait_until_done(kube, name, lambda: trainjob_state(kube, name), "node")
    assert state == "Complete", overrun(kube, name, state, took, output)
    assert jobset(kube, name)["status"]["restarts"] == 1
    resumed = sorted(RESUMED.findall("\n".join(output.values())))
    assert resumed == [("0", "1", step), ("1", "1", step)], output
    assert weights(output) == {learned}
    return get(kube, name, "trainjob", name)


def test_a_trainjob_whose_first_attempt_hangs_is_ended_by_its_deadline_and_resumes(
    jobsets: Kube, unfaulted: Callable[[], str]
) -> None:
    """The deadline is each attempt's (the Jobs' activeDeadlineSeconds in the job's own
    TrainingRuntime): the hung attempt's Job fails DeadlineExceeded, the JobSet restarts the
    group once, and the second attempt resumes from the checkpoint before the hang and
    completes; the TrainJob's own deadline, which counts from its creation
    (trainjob_controller.go:156-181 at v2.3.0), would have failed the job instead."""
    trainjob = trainjob_resumed_once(jobsets, TJ_HUNG, "20", unfaulted())
    events = get(jobsets, TJ_HUNG, "events", "--field-selector", "reason=DeadlineExceeded")
    assert [e["involvedObject"]["kind"] for e in events["items"]] == ["Job"], events
    assert trainjob["spec"].get("activeDeadlineSeconds") is None  # not the TrainJob's
    trained_in(lifetime(trainjob, "Complete"), "a trainjob: a hang, ended by its deadline")


def test_a_preempted_job_is_readmitted_and_resumes_without_using_a_restart(
    jobsets: Kube, tmp_path: Path, unfaulted: Callable[[], str]
) -> None:
    """Kueue preempts by suspending the JobSet, which suspends its Job: the ranks stop, none
    counted, and once the job that took the quota is done Kueue admits it again and every
    rank resumes from the checkpoint, restarts unused."""
    name = start(jobsets, restarting(LOW, tmp_path / LOW, 1, STEP_SECONDS="0.05"), True, "low")
    admitted(jobsets, name, "JobSet", name)

    def at_step_100() -> bool:
        return "step 100 loss" in "\n".join(logs(jobsets, name).values())

    wait_for(f"{name} at step 100", at_step_100, timeout=HANG_TIMEOUT)
    start(jobsets, restarting(HIGH, tmp_path / HIGH, 1), True, "high")
    evicted = wait_for(
        f"{name} preempted", lambda: workload_condition(jobsets, name, "JobSet", name, "Evicted")
    )
    assert evicted["reason"] == "Preempted", evicted
    wait_for(f"{name} suspended", lambda: suspended(jobsets, name, "jobset", name))
    took, output = complete(jobsets, name)  # admitted again once the high one is done
    assert final_state(jobsets, HIGH) == "Completed"
    assert jobset(jobsets, name)["status"]["restarts"] == 0  # a suspension is no failure
    steps = {int(s) for _, a, s in RESUMED.findall("\n".join(output.values())) if a == "0"}
    assert len(steps) == 1 and 100 <= steps.pop() < 300, output  # from its checkpoint
    assert weights(output) == {unfaulted()}
    trained_in(took, "preempted, readmitted, resumed")
