"""The token and DNS settings, spec-wide and per role, in every pod spec a workload makes."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.pipeline import build
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.kubeconform import run_kubeconform
from tests import builders
from tests.conftest import require_tool
from tests.helpers import POD_SETTINGS
from tests.render.test_examples import tree_text

SETTINGS: dict[str, Any] = {
    key: POD_SETTINGS[key]
    for key in ("serviceAccountName", "automountServiceAccountToken", "dnsPolicy", "dnsConfig")
}
# a role's own: the cluster's DNS and its search domains, one more search domain of its own
WORKER = {"dnsPolicy": "ClusterFirst", "dnsConfig": {"searches": ["corp.example.com"]}}
ROLES: dict[str, dict[str, Any]] = {
    "job": {"worker": {}},
    "collective-job": {"worker": {"replicas": 2}},
    "paddlejob": {"ps": {"replicas": 1}, "worker": {"replicas": 2}},
    "trainjob": {"worker": {"replicas": 2}},
}


def spec(workload: str) -> dict[str, Any]:
    data = builders.spec(
        workload,
        metadata={"namespace": "ml"},
        **SETTINGS,
        **ROLES[workload],
        volumes=[{"name": "data", "mountPath": "/data", "emptyDir": {}}],
        dataPrep={"volume": "data", "image": "r/data:v1"},
    )
    if workload != "trainjob":  # a TrainJob has one role: its settings are the spec's
        data["spec"]["worker"].update(WORKER)
    return data


def rendered(workload: str) -> build.Rendered:
    return builders.rendered(spec(workload), warnings=["image-tag"], argocd=False)


def pod_specs(workload: str) -> dict[str, dict[str, Any]]:
    """Each pod's spec by who runs it: the roles', the data Job's ("data")."""
    objects = {(m.kind, m.obj["metadata"]["name"]): m.obj for m in rendered(workload).manifests}
    out = {"data": objects["Job", "demo-data"]["spec"]["template"]["spec"]}
    if workload == "paddlejob":
        body = objects["PaddleJob", "demo"]["spec"]
        out.update({role: body[role]["template"]["spec"] for role in ROLES[workload]})
    elif workload == "trainjob":
        runtime = objects["TrainingRuntime", "demo"]["spec"]["template"]["spec"]
        (node,) = runtime["replicatedJobs"]
        out["worker"] = node["template"]["spec"]["template"]["spec"]
    else:
        out["worker"] = objects["Job", "demo"]["spec"]["template"]["spec"]
    return out


@pytest.mark.parametrize("workload", ROLES)
def test_the_settings_land_in_every_pod_spec_a_roles_own_replacing_the_spec_wide(workload):
    pods = pod_specs(workload)
    assert set(pods) == {"data", *ROLES[workload]}
    for who, pod in pods.items():
        own = WORKER if who == "worker" and workload != "trainjob" else {}
        wanted = {key: own.get(key, SETTINGS[key]) for key in ("dnsPolicy", "dnsConfig")}
        assert {key: pod.get(key) for key in wanted} == wanted, who
        assert pod["automountServiceAccountToken"] is True, who


def test_a_trainjob_gets_a_runtime_of_its_own_and_references_it():
    objects = {m.kind: m.obj for m in rendered("trainjob").manifests}
    ref = objects["TrainJob"]["spec"]["runtimeRef"]
    assert ref == {"name": "demo", "apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime"}
    assert objects["TrainingRuntime"]["metadata"]["namespace"] == "ml"
    # the runtime patch still carries the account, which PodSpecPatch has
    (patch,) = objects["TrainJob"]["spec"]["runtimePatches"]
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod = node["template"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "trainer"
    assert not {"automountServiceAccountToken", "dnsPolicy", "dnsConfig"} & set(pod)


@pytest.mark.parametrize("workload", ROLES)
def test_the_manifests_pass_kubeconform(workload):
    files = [(f"{m.kind}-{i}.yaml", m.text()) for i, m in enumerate(rendered(workload).manifests)]
    assert validate_in_process(files) == []
    assert run_kubeconform(files, require_tool("kubeconform")) == []


@pytest.mark.parametrize("workload", ROLES)
def test_the_token_and_dns_settings_render_to_their_snapshot(workload, yaml_snapshot):
    assert tree_text(rendered(workload)) == yaml_snapshot
