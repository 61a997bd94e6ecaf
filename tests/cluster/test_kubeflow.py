"""The Kubeflow training-operator (v1.9.0, built from its sources, gang scheduling through
Volcano, which runs too) runs `kubeflow-paddlejob` specs on KWOK's fake nodes: pods per
replica with paddlegen's container first and intact, the job Running then Succeeded; with
Volcano asked for, the operator builds the gang's PodGroup from runPolicy.schedulingPolicy and
owns it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.quantity import parse
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_paddleflow import assert_resources_kept, get, wait_for
from tests.conftest import example_specs

EXAMPLES = [p for p in example_specs() if "workload: kubeflow-paddlejob" in p.read_text()]


@pytest.fixture(scope="module")
def training_operator(kube: Kube) -> Kube:
    return with_extras(kube, ["kwok", "volcano", "training-operator"])


def condition(job: dict[str, Any] | None) -> str:
    """The newest true condition of a Kubeflow job (Created, Running, Succeeded, ...)."""
    true = [
        c["type"]
        for c in (job or {}).get("status", {}).get("conditions", [])
        if c["status"] == "True"
    ]
    return true[-1] if true else ""


def run_to_success(
    kube: Kube, namespace: str, data: dict[str, Any], running_check=None
) -> dict[str, Any]:
    """Apply the render, wait until every replica runs, check the pods (and
    ``running_check(job)``), finish them."""
    kube.run("create", "namespace", namespace)
    rendered = build.render_document(parse_spec(yaml.safe_dump(data).encode(), "spec.yaml"))
    kube.apply(build.manifest_stream([rendered]))
    (job,) = [m.obj for m in rendered.manifests if m.kind == "PaddleJob"]
    name, replicas = job["metadata"]["name"], job["spec"]["paddleReplicaSpecs"]
    total = sum(r["replicas"] for r in replicas.values())

    def running() -> list[dict[str, Any]]:
        pods = get(kube, namespace, "pods")["items"]
        return [p for p in pods if p["status"].get("phase") == "Running"]

    # With --gang-scheduler-name=volcano the operator gangs every job, asked for or not: it
    # makes a PodGroup, which Volcano admits and whose pods it places as one gang.
    wait_for("the operator's PodGroup", lambda: get(kube, namespace, "podgroup", name))
    wait_for(f"{total} running pods", lambda: len(running()) == total, timeout=90)
    for pod in running():
        kind = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
        ours = next(v for k, v in replicas.items() if k.lower() == kind.lower())
        container = ours["template"]["spec"]["containers"][0]
        first = pod["spec"]["containers"][0]
        assert (first["name"], first["image"]) == (container["name"], container["image"])
        assert_resources_kept(container.get("resources", {}), first.get("resources", {}))
        names = [e["name"] for e in first.get("env", [])]
        assert "PADDLE_MASTER" in names and "PADDLE_NNODES" in names  # the operator's own
    wait_for(
        "condition Running",
        lambda: condition(get(kube, namespace, "paddlejobs.kubeflow.org", name)) == "Running",
    )
    if running_check:
        running_check(job)
    for pod in running():
        kube.succeed(namespace, pod["metadata"]["name"])
    wait_for(
        "condition Succeeded",
        lambda: condition(get(kube, namespace, "paddlejobs.kubeflow.org", name)) == "Succeeded",
        timeout=90,
    )
    return job


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_operator_runs_and_finishes_the_job(training_operator: Kube, example) -> None:
    data = yaml.safe_load(example.read_text())
    data["metadata"]["namespace"] = f"kf-{example.stem}"
    run_to_success(training_operator, data["metadata"]["namespace"], data)


def test_the_operator_owns_the_gang_and_nothing_outlives_the_job(training_operator: Kube) -> None:
    kube = training_operator
    data = yaml.safe_load(EXAMPLES[0].read_text())
    data["metadata"]["namespace"] = "kf-gang"
    data["spec"]["scheduling"] = {"scheduler": "volcano", "queue": "default"}

    def owned(job: dict[str, Any]) -> None:
        name, policy = job["metadata"]["name"], job["spec"]["runPolicy"]["schedulingPolicy"]
        group = get(kube, "kf-gang", "podgroup", name)
        (owner,) = group["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("PaddleJob", name, True)
        assert group["spec"]["minMember"] == policy["minAvailable"]
        assert group["spec"]["queue"] == policy["queue"]

    job = run_to_success(kube, "kf-gang", data, owned)
    name = job["metadata"]["name"]
    wait_for("the PodGroup to go with the job", lambda: not get(kube, "kf-gang", "podgroup", name))


def test_the_pods_carry_the_sidecars_then_the_init_containers(training_operator: Kube) -> None:
    """The operator copies each replica's template into its pods (training-operator v1.9.0
    pkg/controller.v1/common/pod.go:410, 455): a sidecar keeps restartPolicy Always (its CRD
    has the field), comes before the init containers, keeps its ports and probe; and the gang's
    minResources, which counts the sidecars, reaches the PodGroup as rendered."""
    kube = training_operator
    data = yaml.safe_load(EXAMPLES[0].read_text())
    namespace = data["metadata"]["namespace"] = "kf-sidecars"
    data["spec"]["scheduling"] = {"scheduler": "volcano", "queue": "default"}
    data["spec"]["initContainers"] = [
        {"name": "fetch", "image": "busybox:1.36.1", "command": ["sh", "-c", "true"]}
    ]
    data["spec"]["sidecars"] = [
        {
            "name": "agent",
            "image": "prom/statsd-exporter:v0.27.1",
            "ports": [{"name": "metrics", "containerPort": 9102}],
            "startupProbe": {"tcpSocket": {"port": "metrics"}, "periodSeconds": 1},
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
        }
    ]

    def carried(job: dict[str, Any]) -> None:
        name, policy = job["metadata"]["name"], job["spec"]["runPolicy"]["schedulingPolicy"]
        group = get(kube, namespace, "podgroup", name)
        assert {k: parse(v) for k, v in group["spec"]["minResources"].items()} == {
            k: parse(v) for k, v in policy["minResources"].items()
        }
        for pod in get(kube, namespace, "pods")["items"]:
            kind = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
            replica = next(
                v for k, v in job["spec"]["paddleReplicaSpecs"].items() if k.lower() == kind.lower()
            )
            ours = replica["template"]["spec"]["initContainers"]
            theirs = pod["spec"]["initContainers"]  # with the API server's defaults
            for key in ("name", "image", "restartPolicy", "command", "securityContext"):
                assert [c.get(key) for c in theirs] == [c.get(key) for c in ours], key
            agent = theirs[0]
            assert (agent["name"], agent["restartPolicy"]) == ("agent", "Always")
            assert agent["ports"][0]["name"] == "metrics"
            assert agent["startupProbe"]["tcpSocket"] == {"port": "metrics"}
            assert_resources_kept(ours[0]["resources"], agent["resources"])

    run_to_success(kube, namespace, data, carried)
