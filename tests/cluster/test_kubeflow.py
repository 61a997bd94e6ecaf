"""The Kubeflow training-operator (v1.9.0, built from its sources, gang scheduling through
Volcano, which runs too) runs `kubeflow-paddlejob` specs on KWOK's fake nodes: pods per
replica with paddlegen's container first and intact, the job Running then Succeeded; with
Volcano asked for, the operator builds the gang's PodGroup from runPolicy.schedulingPolicy and
owns it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen import api
from paddlegen.spec.loader import parse_spec
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
    rendered = api.render_document(parse_spec(yaml.safe_dump(data).encode(), "spec.yaml"))
    kube.apply(api.manifest_stream([rendered]))
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
