"""`collective-job` (#26) trains for real on a real node (`hack/local-cluster --with node`):
Paddle 3.x's launcher in every pod of the Indexed Job, started by paddlegen's master wrapper,
finds rank 0 through the headless Service's name (rank 0 serving the rendezvous at its own IP),
and the ranks train a linear regression (tests/cluster/training/collective.py) to completion,
2 ranks and 3 (gang-scheduled by the real Volcano), the loss falling and the ranks agreeing.
A job whose rank 1 exits 1 fails as a whole at that exit (the pod failure policy's FailJob
rule, no retry): the other ranks, waiting for it in the rendezvous, are stopped, and the Job
is Failed. How long each job took goes to benchmarks/node.py (trained_in), not into a test."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    PROGRAM,
    create_namespace,
    get,
    overrun,
    render,
    trained_in,
    wait_until_done,
)
from tests.cluster.training import assert_masters, assert_trained

pytestmark = pytest.mark.node

INDEX = "batch.kubernetes.io/job-completion-index"


@pytest.fixture(scope="module")
def gang(node: Kube) -> Kube:
    """The node with Volcano, which gang-schedules a Job's pods by its group-min-member."""
    return with_extras(node, ["volcano"])


def spec(name: str, replicas: int, **extra: Any) -> dict[str, Any]:
    """A collective-job in a namespace of its name, running the training program of the
    ConfigMap `program` (create_namespace makes it) with Paddle's launcher, the workload's
    default command."""
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": name},
        "spec": {
            "workload": "collective-job",
            "image": local_cluster().images.PADDLE.reference,
            "imagePullPolicy": "Never",  # imported by `up`, no registry has it
            "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "2Gi"}},
            "args": [PROGRAM],
            "volumes": [
                {
                    "name": "program",
                    "mountPath": "/program",
                    "readOnly": True,
                    "configMap": {"name": "program"},
                }
            ],
            "worker": {"replicas": replicas},
            # a short grace: a rank stopped while it waits for the others exits at once
            "terminationGracePeriodSeconds": 5,
            **extra,
        },
    }


def apply(kube: Kube, data: dict[str, Any]) -> None:
    from paddlegen.pipeline import build

    create_namespace(kube, data, "collective")
    kube.apply(build.manifest_stream([render(data)]))


def job_condition(kube: Kube, namespace: str, name: str) -> str:
    conditions = (get(kube, namespace, "job", name) or {}).get("status", {}).get("conditions", [])
    true = [c["type"] for c in conditions if c["status"] == "True"]
    return next((t for t in true if t in ("Complete", "Failed")), "")


def pods(kube: Kube, namespace: str, name: str) -> list[dict[str, Any]]:
    found = get(kube, namespace, "pods", "-l", f"batch.kubernetes.io/job-name={name}")
    return sorted(found["items"], key=lambda p: int(p["metadata"]["annotations"][INDEX]))


def train(kube: Kube, name: str, replicas: int, **extra: Any) -> dict[str, str]:
    """Run a collective-job of ``replicas`` ranks to completion: its pods' logs."""
    apply(kube, spec(name, replicas, **extra))
    state, took, output = wait_until_done(kube, name, lambda: job_condition(kube, name, name))
    assert state == "Complete", overrun(kube, name, state, took, output)
    assert_trained(output, replicas)
    ranks = {int(p["metadata"]["annotations"][INDEX]): p for p in pods(kube, name, name)}
    assert len(ranks) == replicas
    assert_masters(output, ranks, f"{name}-0.{name}:6768")
    trained_in(took, f"{replicas} ranks trained")
    return output


def test_a_collective_job_of_two_ranks_trains(node: Kube) -> None:
    train(node, "coll-two", 2)


def test_a_collective_job_trains_on_a_read_only_root_file_system(node: Kube) -> None:
    """Paddle's launcher writes its logs where PADDLE_LOG_DIR says, on an emptyDir: it exited
    1 at start when it wrote them to its working directory on a read-only root."""
    train(node, "coll-ro", 2, security={"readOnlyRootFilesystem": True})


def test_a_collective_job_of_three_ranks_trains_as_one_volcano_gang(gang: Kube) -> None:
    train(gang, "coll-three", 3, scheduling={"scheduler": "volcano"})
    groups = get(gang, "coll-three", "podgroups")["items"]
    assert [g["spec"]["minMember"] for g in groups] == [3]
    assert {p["spec"]["schedulerName"] for p in pods(gang, "coll-three", "coll-three")} == {
        "volcano"
    }


def test_a_rank_that_exits_1_fails_the_whole_job_quickly(node: Kube) -> None:
    name = "coll-fail"
    # rank 1 fails before it joins; ranks 0 and 2 start the launcher and wait for it
    command = [
        "sh", "-c",
        '[ "$PADDLE_RANK" != 1 ] || { echo "rank 1 fails"; exit 1; }; exec "$0" "$@"',
        "python3", "-m", "paddle.distributed.launch",
    ]  # fmt: skip
    started = time.monotonic()
    apply(node, spec(name, 3, command=command))
    state = ""
    while time.monotonic() - started < HANG_TIMEOUT and not state:
        state = job_condition(node, name, name)
        time.sleep(0.5)
    took = time.monotonic() - started
    job = get(node, name, "job", name)
    assert state == "Failed", overrun(node, name, state, took, job.get("status"))
    (failed,) = [c for c in job["status"]["conditions"] if c["type"] == "Failed"]
    assert failed["reason"] == "PodFailurePolicy"
    assert "failed with exit code 1 matching FailJob rule at index 1" in failed["message"]
    # every pod stopped: the failed rank kept, the others deleted (gone, or going); no rank
    # made again
    left = pods(node, name, name)
    indexes = [p["metadata"]["annotations"][INDEX] for p in left]
    assert "1" in indexes and len(indexes) == len(set(indexes)), indexes
    assert {p["status"]["phase"] for p in left} <= {"Failed", "Succeeded"}
    for pod, index in zip(left, indexes, strict=True):
        assert index == "1" or pod["metadata"].get("deletionTimestamp"), pod["metadata"]
    assert job["status"].get("active", 0) == 0
    trained_in(took, "failed")


def capabilities_of(kube: Kube, name: str, **security: Any) -> dict[str, str]:
    """What the training container of a `job` with IPC_LOCK added and ``security`` sees on
    the node: its effective and ambient capability sets, and its memlock limit."""
    from paddlegen.pipeline import build

    probe = "grep -E '^Cap(Eff|Amb)' /proc/self/status; echo \"Memlock: $(ulimit -l)\""
    data = {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": name},
        "spec": {
            "workload": "job",
            "image": local_cluster().images.PADDLE.reference,
            "imagePullPolicy": "Never",
            "command": ["sh", "-c", probe],
            "resources": {"requests": {"cpu": "50m"}, "limits": {"memory": "256Mi"}},
            "security": {"capabilities": {"add": ["IPC_LOCK"]}, **security},
        },
    }
    kube.run("create", "namespace", name)
    kube.apply(build.manifest_stream([render(data)]))
    state, took, output = wait_until_done(kube, name, lambda: job_condition(kube, name, name))
    assert state == "Complete", overrun(kube, name, state, took, output)
    (log,) = output.values()
    return dict(line.split(":\t", 1) if ":\t" in line else line.split(": ", 1)
                for line in log.splitlines() if ":" in line)  # fmt: skip


def test_ipc_lock_takes_effect_for_a_root_container_only(node: Kube) -> None:
    """What the rules `rdma` and `ipc-lock-non-root` rest on, as containerd runs it here: an
    added capability is effective for root; a non-root process gets none, not even ambient
    (kubernetes/kubernetes#56374), so only the node's memlock limit bounds what it pins."""
    ipc_lock = 1 << 14  # CAP_IPC_LOCK (linux/capability.h)
    root = capabilities_of(node, "caps-root")
    other = capabilities_of(node, "caps-user", runAsNonRoot=True, runAsUser=1000)
    assert int(root["CapEff"], 16) == ipc_lock, root
    assert int(other["CapEff"], 16) == 0 and int(other["CapAmb"], 16) == 0, other
    assert other["Memlock"].strip() == "unlimited" or other["Memlock"].strip().isdigit(), other
    print(f"memlock: root {root['Memlock']}, user 1000 {other['Memlock']}")
