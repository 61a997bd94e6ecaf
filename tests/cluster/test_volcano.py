"""Volcano (vc-scheduler and vc-controller-manager v1.14.1, built from their sources) gangs for
real on KWOK's fake nodes: a PodGroup whose gang cannot be placed whole gets none of its pods
bound, one that fits goes Inqueue then Running, and PaddleFlow's paddlejob-volcano example,
rendered by `paddlegen render --stdout`, runs with its PodGroup admitted by Volcano alone."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from paddlegen.cli import cli
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import EXAMPLES

# One such pod per fake node (64 cpu each): a gang of FAKE_NODES fits, one more does not.
BIG_CPU = "40"
# Long enough for several of vc-scheduler's 1 s cycles to have tried and given up.
SETTLE = 5.0


@pytest.fixture(scope="module")
def volcano(kube: Kube) -> Kube:
    return with_extras(kube, ["kwok", "volcano", "paddle-operator"])


def gang(namespace: str, name: str, pods: int, min_member: int, cpu: str, **spec: Any) -> str:
    """A PodGroup and ``pods`` plain pods in it that name Volcano, as a stream to apply."""
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": min_member, "queue": "default", **spec},
    }
    members = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": namespace,
                "annotations": {"scheduling.k8s.io/group-name": name},
            },
            "spec": {
                "schedulerName": "volcano",
                "automountServiceAccountToken": False,
                "containers": [
                    {"name": "c", "image": "img:1", "resources": {"requests": {"cpu": cpu}}}
                ],
            },
        }
        for i in range(pods)
    ]
    return "".join(f"---\n{json.dumps(o)}\n" for o in (group, *members))


def conditions(group: dict[str, Any] | None) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (group or {}).get("status", {}).get("conditions", [])}


@pytest.fixture
def namespace(volcano: Kube, request: pytest.FixtureRequest) -> Any:
    """A namespace of the test's own, deleted after it: a gang left Inqueue would keep its
    minResources reserved in the default Queue for the tests that follow."""
    name = "vc-" + request.node.name.split("[")[-1].rstrip("]").replace("_", "-")[-40:]
    volcano.run("create", "namespace", name)
    yield name
    volcano.run("delete", "namespace", name, "--wait=false")


@pytest.mark.parametrize(
    "case",
    [
        # Pods that fit one per node, one more than there are nodes: kube-scheduler would bind
        # FAKE_NODES of them; Volcano binds none (gang), whatever it admitted.
        "one-pod-too-many",
        # minResources beyond the whole cluster: `enqueue` never admits it.
        "more-than-the-cluster",
    ],
)
def test_a_gang_that_does_not_fit_gets_no_pod_bound(
    volcano: Kube, namespace: str, case: str
) -> None:
    nodes = local_cluster().kwok.FAKE_NODES
    if case == "one-pod-too-many":
        stream = gang(namespace, "too-many", nodes + 1, nodes + 1, BIG_CPU)
    else:
        stream = gang(namespace, "too-big", 2, 2, "1", minResources={"cpu": "100000"})
    volcano.apply(stream)
    name = "too-many" if case == "one-pod-too-many" else "too-big"
    # vc-scheduler has looked at it: it says why the gang is not scheduled
    wait_for(
        "the PodGroup's Unschedulable condition",
        lambda: (
            conditions(get(volcano, namespace, "podgroup", name)).get("Unschedulable") == "True"
        ),
    )
    time.sleep(SETTLE)
    group = get(volcano, namespace, "podgroup", name)
    pods = get(volcano, namespace, "pods")["items"]
    assert [p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")] == []
    assert {p["status"]["phase"] for p in pods} == {"Pending"}
    assert group["status"].get("running", 0) == 0
    condition = next(c for c in group["status"]["conditions"] if c["type"] == "Unschedulable")
    assert condition["reason"] == "NotEnoughResources"
    assert "minAvailable" in condition["message"]
    if case == "one-pod-too-many":
        # admitted (it asks for no minResources), then never placed: a whole gang or nothing
        assert group["status"]["phase"] == "Inqueue"
    else:
        # never admitted: `enqueue` found the cluster too small for its minResources
        assert group["status"]["phase"] == "Pending"
        events = get(volcano, namespace, "events", f"--field-selector=involvedObject.name={name}")
        assert any("overused" in e["message"] for e in events["items"])


def test_a_gang_that_fits_goes_inqueue_then_running_on_the_fake_nodes(
    volcano: Kube, namespace: str
) -> None:
    nodes = local_cluster().kwok.FAKE_NODES
    volcano.apply(gang(namespace, "fits", nodes, nodes, BIG_CPU))
    phases = watch_phases(volcano, namespace, "fits")
    assert phases[-1] == "Running"
    group = get(volcano, namespace, "podgroup", "fits")
    assert group["status"]["running"] == nodes
    pods = get(volcano, namespace, "pods")["items"]
    # one per node, every one bound by vc-scheduler (kube-scheduler has no `volcano` profile
    # when Volcano runs)
    assert len({p["spec"]["nodeName"] for p in pods}) == nodes
    assert {p["spec"]["nodeName"].startswith("kwok-node-") for p in pods} == {True}
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    assert scheduled_by(volcano, namespace) == {"volcano"}


def watch_phases(kube: Kube, namespace: str, name: str) -> list[str]:
    """The PodGroup's phases as seen until it is Running (each once, in order); they only go
    forward: Pending, Inqueue, Running (a short phase may pass unseen between two looks)."""
    phases: list[str] = []

    def running() -> bool:
        group = get(kube, namespace, "podgroup", name)
        phase = (group or {}).get("status", {}).get("phase", "")
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
        return phase == "Running"

    wait_for(f"PodGroup {name} Running", running)
    order = ["Pending", "Inqueue", "Running"]
    assert phases == sorted(phases, key=order.index), phases
    return phases


def scheduled_by(kube: Kube, namespace: str) -> set[str]:
    """Who reported the namespace's pods Scheduled (bound to a node)."""
    events = get(kube, namespace, "events", "--field-selector=reason=Scheduled")["items"]
    return {e["source"].get("component") or e.get("reportingComponent", "") for e in events}


def test_the_paddleflow_example_runs_under_volcano_alone(volcano: Kube, tmp_path: Path) -> None:
    """examples/paddlejob-volcano.yaml as `paddlegen render --stdout` prints it: the operator
    makes its PodGroup and waits for Inqueue, which vc-scheduler sets (nobody else does here),
    then vc-scheduler binds the four pods as one gang."""
    data = yaml.safe_load((EXAMPLES / "paddlejob-volcano.yaml").read_text())
    data["metadata"]["namespace"] = "vc-paddleflow"  # test_examples applies it as it is
    spec = tmp_path / "paddlejob-volcano.yaml"
    spec.write_text(yaml.safe_dump(data))
    done = CliRunner().invoke(cli, ["render", str(spec), "--stdout"])
    assert done.exit_code == 0, done.output
    objects = [o for o in yaml.safe_load_all(done.stdout) if o]
    (paddlejob,) = [o for o in objects if o["kind"] == "PaddleJob"]
    namespace, name = paddlejob["metadata"]["namespace"], paddlejob["metadata"]["name"]
    total = sum(paddlejob["spec"][role]["replicas"] for role in ("ps", "worker"))
    volcano.run("create", "namespace", namespace)
    try:
        volcano.apply(done.stdout)
        phases = watch_phases(volcano, namespace, name)
        assert phases[-1] == "Running"
        pods = get(volcano, namespace, "pods")["items"]
        assert len(pods) == total
        for pod in pods:
            assert pod["spec"]["schedulerName"] == "volcano"
            assert pod["spec"]["nodeName"].startswith("kwok-node-")
        assert scheduled_by(volcano, namespace) == {"volcano"}
        wait_for(
            "the PaddleJob Running",
            lambda: (
                (get(volcano, namespace, "paddlejobs.batch.paddlepaddle.org", name) or {})
                .get("status", {})
                .get("phase")
                == "Running"
            ),
        )
    finally:
        volcano.run("delete", "namespace", namespace, "--wait=false")


def test_kube_scheduler_no_longer_answers_to_volcano(volcano: Kube) -> None:
    # The session's control plane started with the stand-in profile; starting Volcano on it
    # restarted kube-scheduler without it: two schedulers of one name would race for a pod.
    config = json.loads((volcano.state / "kube-scheduler.json").read_text())
    assert [p["schedulerName"] for p in config["profiles"]] == ["default-scheduler"]
    recorded = json.loads((volcano.state / "cluster.json").read_text())["pids"]
    assert {"vc-scheduler", "vc-controller-manager", "kube-scheduler"} <= set(recorded)


def hyper_nodes() -> list[dict[str, Any]]:
    """Tier 1: a HyperNode per rack of the fake nodes, its members picked by their rack label;
    tier 2: one per block, its racks as members."""
    kwok = local_cluster().kwok
    racks = [
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": rack},
            "spec": {
                "tier": 1,
                "members": [
                    {
                        "type": "Node",
                        "selector": {"labelMatch": {"matchLabels": {kwok.RACK_LABEL: rack}}},
                    }
                ],
            },
        }
        for rack in kwok.RACKS
    ]
    blocks = {block for block, _ in kwok.RACKS.values()}
    return racks + [
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": block},
            "spec": {
                "tier": 2,
                "members": [
                    {"type": "HyperNode", "selector": {"exactMatch": {"name": rack}}}
                    for rack, (its, _) in kwok.RACKS.items()
                    if its == block
                ],
            },
        }
        for block in sorted(blocks)
    ]


def test_a_gang_with_a_required_topology_runs_inside_one_hypernode(
    volcano: Kube, namespace: str
) -> None:
    """A collective-job of four whole-node ranks that must stay in one rack (HyperNode tier
    1), rendered by paddlegen: Volcano's podgroup controller gives the Job's PodGroup the
    pods' network topology, and vc-scheduler binds the gang in rack-2, the one rack of four
    nodes (rack-1 has three)."""
    kwok = local_cluster().kwok
    stream = "".join(f"---\n{json.dumps(o)}\n" for o in hyper_nodes())
    volcano.apply(stream)
    data = {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "ring", "namespace": namespace},
        "spec": {
            "workload": "collective-job",
            "image": "registry.example.com/resnet:v1",
            "args": ["train.py"],
            "resources": {"requests": {"cpu": BIG_CPU}, "limits": {"memory": "1Gi"}},
            "worker": {"replicas": 4},
            "scheduling": {
                "scheduler": "volcano",
                "topology": {"required": kwok.RACK_LABEL, "hyperNodeTier": 1},
            },
        },
    }
    rendered = build.render_document(parse_spec(yaml.safe_dump(data).encode(), "spec.yaml"))
    try:
        volcano.apply(build.manifest_stream([rendered]))
        (group,) = wait_for(
            "the Job's PodGroup", lambda: (get(volcano, namespace, "podgroup") or {}).get("items")
        )
        assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}

        def bound() -> list[dict[str, Any]]:
            pods = get(volcano, namespace, "pods", "-l", "job-name=ring")["items"]
            return pods if len([p for p in pods if p["spec"].get("nodeName")]) == 4 else []

        pods = wait_for("the four ranks bound", bound)
        nodes = {p["spec"]["nodeName"] for p in pods}
        assert len(nodes) == 4
        places = kwok.node_places()
        assert {places[int(node.rsplit("-", 1)[1])][1] for node in nodes} == {"rack-2"}
        assert scheduled_by(volcano, namespace) == {"volcano"}
    finally:
        volcano.run(
            "delete",
            "hypernodes.topology.volcano.sh",
            *(o["metadata"]["name"] for o in hyper_nodes()),
        )
