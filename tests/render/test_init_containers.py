"""Init containers and native sidecars, spec-wide and per role, on every workload's trainers."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen import workloads
from paddlegen.pipeline import build
from paddlegen.validate.inprocess import validate_in_process
from tests import builders
from tests.helpers import INIT_CONTAINERS as INIT
from tests.helpers import ROLE_SIDECARS as WORKER_SIDECARS
from tests.helpers import SIDECARS
from tests.render.test_examples import tree_text
from tests.render.test_pod_settings import ROLES, data_pod, training_pods

RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
WORKLOADS = tuple(ROLES)
# Not those whose object cannot carry a sidecar (PaddleFlow's CRD, rule
# paddlejob-sidecar-pruned).
WITH_SIDECARS = tuple(w for w in WORKLOADS if not workloads.WORKLOADS[w].no_sidecars)


def spec(workload: str, **extra: Any) -> dict[str, Any]:
    own: dict[str, Any] = {"sidecars": SIDECARS} if workload in WITH_SIDECARS else {}
    if workload == "distributed-job":
        own["distributed"] = {"volume": "data", "trainConfigDir": "qs", "hostPorts": False}
    return builders.spec(
        workload,
        metadata={"namespace": "ml"},
        resources={"requests": {"cpu": 1}, "limits": {"memory": "1Gi"}},
        volumes=[
            {"name": "data", "mountPath": "/data", "emptyDir": {}},
            {"name": "code", "mountPath": "/code", "emptyDir": {}},
            {"name": "logs", "mountPath": "/var/log/train", "readOnly": True, "emptyDir": {}},
        ],
        dataPrep={"volume": "data", "image": "r/data:v1"},
        initContainers=INIT,
        **ROLES[workload],
        **own,
        **extra,
    )


def rendered(data: dict[str, Any]) -> build.Rendered:
    return builders.rendered(data, argocd=False)


def render(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [m.obj for m in rendered(data).manifests]


def init_containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    return list(template["spec"].get("initContainers", []))


def names(template: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(c["name"], c.get("restartPolicy")) for c in init_containers(template)]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_sidecars_start_first_then_the_init_containers_on_every_training_pod(workload):
    pods = training_pods(render(spec(workload)))
    assert set(pods) == set(ROLES[workload])
    sidecars = [("log-shipper", "Always")] if workload in WITH_SIDECARS else []
    for template in pods.values():
        assert names(template) == [*sidecars, ("fetch-code", None), ("warm-cache", None)]
        # the training container stays first among the containers, and alone
        assert [c["name"] for c in template["spec"]["containers"]] == ["paddle"]


@pytest.mark.parametrize("workload", WITH_SIDECARS)
def test_a_sidecar_carries_its_ports_and_probes_as_given(workload):
    (template, *_) = training_pods(render(spec(workload))).values()
    shipper = init_containers(template)[0]
    assert shipper["ports"] == [{"name": "http", "containerPort": 2020}]
    assert shipper["startupProbe"] == SIDECARS[0]["startupProbe"]
    assert shipper["livenessProbe"] == {"tcpSocket": {"port": 2020}}
    assert all("ports" not in c and "startupProbe" not in c for c in init_containers(template)[1:])


@pytest.mark.parametrize("workload", ["distributed-job", "kubeflow-paddlejob"])
def test_a_roles_own_lists_replace_the_spec_wide_ones_for_its_pods_only(workload):
    data = spec(workload)
    data["spec"]["worker"]["sidecars"] = WORKER_SIDECARS
    data["spec"]["worker"]["initContainers"] = []  # none at all for the workers
    pods = training_pods(render(data))
    assert names(pods["worker"]) == [("metrics", "Always")]
    for role in set(pods) - {"worker"}:
        assert [n for n, _ in names(pods[role])] == ["log-shipper", "fetch-code", "warm-cache"]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_data_job_runs_none(workload):
    pod = data_pod(render(spec(workload)))
    assert "initContainers" not in pod["spec"]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["paddle"]


def test_mounts_are_where_and_as_the_training_containers_unless_they_say_otherwise():
    (template,) = training_pods(render(spec("job"))).values()
    mounts = {c["name"]: c["volumeMounts"] for c in init_containers(template)}
    assert mounts == {
        # readOnly from the volume, at its mountPath
        "log-shipper": [{"name": "logs", "mountPath": "/var/log/train", "readOnly": True}],
        "fetch-code": [{"name": "code", "mountPath": "/code"}],
        "warm-cache": [{"name": "data", "mountPath": "/cache", "subPath": "cache"}],
    }
    data = spec("job")
    data["spec"]["sidecars"][0]["volumeMounts"] = [
        {"name": "logs", "mountPath": "/logs", "readOnly": False}
    ]
    (template,) = training_pods(render(data)).values()
    assert init_containers(template)[0]["volumeMounts"] == [{"name": "logs", "mountPath": "/logs"}]
    # the pod lists each volume once, whoever mounts it
    assert [v["name"] for v in template["spec"]["volumes"]] == ["data", "code", "logs"]


@pytest.mark.parametrize(
    ("security", "expected"),
    [
        (None, RESTRICTED),
        ({"runAsNonRoot": True, "runAsUser": 1000}, {**RESTRICTED, "runAsNonRoot": True,
                                                     "runAsUser": 1000}),
        ({"restricted": False}, None),
    ],
)  # fmt: skip
def test_every_container_runs_with_the_jobs_security_context(security, expected):
    data = spec("kubeflow-paddlejob", **({"security": security} if security else {}))
    for template in training_pods(render(data)).values():
        contexts = [c.get("securityContext") for c in init_containers(template)]
        assert contexts == [expected] * 3
        assert template["spec"]["containers"][0].get("securityContext") == expected


def test_quantities_are_spelled_as_the_api_server_spells_them():
    (template,) = training_pods(render(spec("job"))).values()
    shipper, _, warm = init_containers(template)
    assert shipper["resources"] == {
        "requests": {"cpu": "250m", "memory": "64Mi"},
        "limits": {"memory": "128Mi"},
    }
    assert warm["resources"] == {"requests": {"cpu": "2", "memory": "256Mi"}}  # no default added


def test_the_gang_reserves_what_a_pod_requests_with_its_sidecars_and_init_containers():
    """Per pod: cpu max(1 + 250m, 2 + 250m) = 2250m while warm-cache runs; memory
    max(1Gi + 64Mi, 256Mi + 64Mi) = 1088Mi (the training container's limit as its request)."""
    data = spec("kubeflow-paddlejob", scheduling={"scheduler": "volcano"})
    (job,) = [o for o in render(data) if o["kind"] == "PaddleJob"]
    policy = job["spec"]["runPolicy"]["schedulingPolicy"]
    assert policy["minAvailable"] == 3
    assert policy["minResources"] == {"cpu": "6750m", "memory": "3264Mi"}
    data["spec"].pop("initContainers")  # the sidecars' requests alone add up
    (job,) = [o for o in render(data) if o["kind"] == "PaddleJob"]
    assert job["spec"]["runPolicy"]["schedulingPolicy"]["minResources"] == {
        "cpu": "3750m",
        "memory": "3264Mi",
    }


@pytest.mark.parametrize("workload", WORKLOADS)
def test_without_them_nothing_changes(workload):
    data = spec(workload)
    for key in ("initContainers", "sidecars"):
        data["spec"].pop(key, None)
    for template in training_pods(render(data)).values():
        assert "initContainers" not in template["spec"]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_manifests_pass_the_kubernetes_and_crd_schemas(workload):
    files = [(f"{m.kind}.yaml", m.text()) for m in rendered(spec(workload)).manifests]
    assert validate_in_process(files) == []


@pytest.mark.parametrize("workload", WORKLOADS)
def test_init_containers_and_sidecars_render_to_their_snapshot(workload, yaml_snapshot):
    data = spec(workload)
    data["spec"]["worker"]["sidecars"] = WORKER_SIDECARS
    if workload == "paddlejob":
        data["spec"]["worker"] = {**ROLES[workload]["worker"], "initContainers": INIT[:1]}
    assert tree_text(rendered(data)) == yaml_snapshot
