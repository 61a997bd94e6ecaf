"""`trainjob` (#26) on the real node (`node`) with Kubeflow Trainer v2.3.0 and JobSet v0.12.0:
a TrainJob of 2 nodes and one of 3, gang-scheduled by Volcano, train to completion. Apart
from test_trainjob.py (KWOK): the `node` tests are modules of their own, test_node_*.py,
which one pytest-xdist worker runs while another runs the KWOK cluster's (tests/conftest.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from paddlegen.pipeline import build
from paddlegen.workloads.shared.launcher import NO_NODE_COUNT_EXIT
from paddlegen.workloads.trainjob.names import JOBSET_NAME, MASTER_PORT, NODE, RUNTIME
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_collective import INDEX, render
from tests.cluster.test_node_collective import spec as collective_spec
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    create_namespace,
    overrun,
    trained_in,
    wait_until_done,
)
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_trainjob import install_runtimes, owner, ranks, trainjob_condition
from tests.cluster.training import assert_masters, assert_trained


@pytest.fixture(scope="module")
def node_trainer(node: Kube) -> Kube:
    """The real node with JobSet and Trainer, and paddlegen's runtimes."""
    with_extras(node, ["jobset", "trainer"])
    install_runtimes(node)
    return node


@pytest.fixture(scope="module")
def node_gang(node_trainer: Kube) -> Kube:
    """The same with Volcano, for the runtime whose podGroupPolicy asks for it."""
    return with_extras(node_trainer, ["volcano"])


def node_spec(name: str, nodes: int, **extra: Any) -> dict[str, Any]:
    """A trainjob in a namespace of its name that runs the training program of the ConfigMap
    `program` (create_namespace makes it) under Paddle's launcher, the workload's default
    command: the collective-job of test_node_collective.py as a trainjob. No imagePullPolicy:
    a TrainJob cannot set it (paddlegen warns); the image is tagged and on the node, which
    IfNotPresent, the default, takes."""
    data = collective_spec(name, nodes, **extra)
    data["spec"]["workload"] = "trainjob"
    del data["spec"]["imagePullPolicy"]
    return data


@pytest.mark.node
def test_a_trainjob_of_two_nodes_trains_on_the_real_node(node_trainer: Kube) -> None:
    train_on_the_node(node_trainer, "tj-node-2", 2)


@pytest.mark.node
def test_a_trainjob_of_three_nodes_trains_as_one_volcano_gang(node_gang: Kube) -> None:
    name = "tj-node-3"
    pods = train_on_the_node(node_gang, name, 3, scheduling={"scheduler": "volcano"})
    groups = get(node_gang, name, "podgroups.scheduling.volcano.sh")["items"]
    assert [(g["spec"]["minMember"], owner(g)) for g in groups] == [(3, ("TrainJob", name))]
    assert {p["spec"]["schedulerName"] for p in pods} == {"volcano"}


def train_on_the_node(kube: Kube, name: str, nodes: int, **extra: Any) -> list[dict[str, Any]]:
    """Train the trainjob ``name`` of ``nodes`` nodes to completion on the real node: the loss
    falls, the ranks agree, each met rank 0's master; its pods."""
    data = node_spec(name, nodes, **extra)
    create_namespace(kube, data, "collective")
    kube.apply(build.manifest_stream([render(data)]))

    def finished() -> str:
        for kind in ("Complete", "Failed"):
            if trainjob_condition(kube, name, name, kind):
                return kind
        return ""

    state, took, output = wait_until_done(kube, name, finished, container=NODE)
    assert state == "Complete", overrun(kube, name, state, took, output)
    assert_trained(output, nodes)
    by_rank = {int(p["metadata"]["annotations"][INDEX]): p for p in ranks(kube, name, name)}
    assert len(by_rank) == nodes
    assert_masters(output, by_rank, f"{name}-{NODE}-0-0.{name}:{MASTER_PORT}")
    trained_in(took, f"{nodes} nodes trained")
    return list(by_rank.values())


@pytest.mark.node
def test_a_trainjob_written_by_hand_without_the_node_count_fails_instead_of_training_alone(
    node_trainer: Kube,
) -> None:
    """A TrainJob written with kubectl or the Kubeflow SDK against paddlegen's runtime gives no
    PADDLE_NNODES (paddlegen's TrainJobs do: the runtime leaves it to them). Paddle's launcher
    would take each pod for a job of one node and train alone, and every pod "succeed"; the
    runtime's wrapper stops each pod first, exit code 64, and the TrainJob fails."""
    name = "tj-alone"
    kube = node_trainer
    kube.run("create", "namespace", name)
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": name},
        "spec": {
            "runtimeRef": {"name": RUNTIME},
            "trainer": {
                "numNodes": 2,
                "image": local_cluster().images.PADDLE.reference,
                "args": ["train.py"],
            },
        },
    }
    kube.apply(json.dumps(trainjob))
    failed = wait_for(
        f"{name} failed",
        lambda: trainjob_condition(kube, name, name, "Failed"),
        timeout=HANG_TIMEOUT,
    )
    assert not trainjob_condition(kube, name, name, "Complete"), failed
    stopped = [
        c["state"]["terminated"]
        for p in ranks(kube, name, name)
        for c in p["status"].get("containerStatuses", [])
        if c["name"] == NODE and "terminated" in c["state"]
    ]
    assert stopped and {s["exitCode"] for s in stopped} == {NO_NODE_COUNT_EXIT}, stopped
    logs = kube.run("logs", "-n", name, "-l", f"{JOBSET_NAME}={name}", "-c", NODE).stdout
    assert "paddlegen: PADDLE_NNODES is not set: every pod would train alone" in logs
