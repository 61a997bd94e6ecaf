"""paddlegen.authoring.explain: schema docs, and an OUTPUTS table that renders prove true."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from paddlegen.authoring.explain import (
    OUTPUTS,
    explain,
    field_paths,
    format_doc,
    format_rule,
    outputs,
)
from paddlegen.errors import InputError
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads import WORKLOADS
from paddlegen.yamlio import dump_yaml
from tests.builders import spec
from tests.helpers import POD_SETTINGS

_VOLUMES = [
    {
        "name": "data",
        "mountPath": "/data",
        "nfs": {"server": "10.0.0.1", "path": "/nas"},
        "capacity": "10Gi",
    },
    {"name": "scratch", "mountPath": "/scratch", "emptyDir": {}},
    {"name": "code", "mountPath": "/code", "configMap": {"name": "code"}},
    {"name": "creds", "mountPath": "/creds", "secret": {"secretName": "creds"}},
]
_COMMON = {
    "shm": "1Gi",
    "volumes": _VOLUMES,
    "scheduling": {"scheduler": "volcano"},
    "dataPrep": {"volume": "data", "image": "r/data:v1"},
}
# What the table talks about in a workload's own settings.
_OWN: dict[str, dict[str, Any]] = {
    "distributed-job": {"distributed": {"volume": "data", "trainConfigDir": "qs"}},
    "paddlejob": {"paddlejob": {"withGloo": 1}},
}


def base(workload: str) -> dict[str, Any]:
    """A spec of ``workload`` with every feature the table talks about switched on: each of
    its roles (two workers, one of any other), unless it runs one pod."""
    w = WORKLOADS[workload]
    roles = {} if w.single_pod else {r: {"replicas": 2 if r == "worker" else 1} for r in w.roles}
    return spec(workload, **_COMMON, **roles, **_OWN.get(workload, {}))


# A new value per field (per workload where the base already has the first choice).
MUTATIONS: dict[str, Any] = {
    "metadata.name": "other-name",
    "metadata.namespace": "other-ns",
    "metadata.labels": {"team": "x"},
    "spec.image": "r/other:v2",
    "spec.command": ["other"],
    "spec.args": ["--x"],
    "spec.env": [{"name": "X", "value": "1"}],
    "spec.envFrom": [{"configMapRef": {"name": "other"}}],
    "spec.resources": {"requests": {"cpu": "3"}},
    "spec.gpus": 2,
    "spec.accelerator": "huawei.com/Ascend910",
    "spec.nodeSelector": {"disk": "ssd"},
    "spec.shm": "3Gi",
    "spec.networks": ["rdma-net"],
    "spec.security.capabilities.add": ["IPC_LOCK"],
    "spec.nccl.transport": "ib",
    "spec.nccl.hca": ["mlx5_0"],
    "spec.nccl.gidIndex": 3,
    "spec.nccl.socketIfname": ["eth0"],
    **{f"spec.{key}": value for key, value in POD_SETTINGS.items()},
    "spec.dnsPolicy": "Default",  # None needs a dnsConfig too
    "spec.worker.replicas": 3,
    "spec.ps.replicas": 3,
    "spec.heter.replicas": 2,
    "spec.initContainers": [{"name": "fetch", "image": "b:1", "volumeMounts": [{"name": "code"}]}],
    "spec.sidecars": [{"name": "shipper", "image": "s:1", "ports": [{"containerPort": 2020}]}],
    "spec.volumes.mountPath": "/other",
    "spec.volumes.capacity": "20Gi",
    "spec.volumes.configMap": {"name": "other-code", "defaultMode": 256},
    "spec.volumes.secret": {"secretName": "creds", "items": [{"key": "token", "path": "t"}]},
    "spec.scheduling.scheduler": "default",
    "spec.scheduling.minAvailable": 1,
    "spec.scheduling.queue": "q2",
    "spec.scheduling.kueue.queue": "team-b",
    "spec.scheduling.kueue.priorityClass": "high",
    "spec.run.restartPolicy": {"*": "OnFailure", "kubeflow-paddlejob": "Never"},
    "spec.run.backoffLimit": 5,
    "spec.run.restarts": 3,
    "spec.run.activeDeadlineSeconds": 100,
    "spec.run.ttlSecondsAfterFinished": 60,
    "spec.paddlejob.cleanPodPolicy": "Always",
    "spec.paddlejob.withGloo": 2,
    "spec.paddlejob.intranet": "Host",
    "spec.paddlejob.elastic": 1,
    "spec.kubeflow.cleanPodPolicy": "All",
    "spec.kubeflow.port": 4000,
    "spec.distributed.volume": "scratch",
    "spec.distributed.trainConfigDir": "other",
    "spec.distributed.nic": "eth1",
    "spec.distributed.port": 8000,
    "spec.distributed.portsNum": 3,
    "spec.distributed.portsNumSparse": 1,
    "spec.distributed.trainerCount": 4,
    "spec.distributed.hostPorts": False,
    "spec.collective.port": 8090,
    "spec.trainjob.runtime": "my-paddle-runtime",
    "spec.dataPrep.image": "r/data:v2",
    "spec.dataPrep.splitCount": 7,
    "spec.dataPrep.outDir": "/data/elsewhere",
    "spec.dataPrep.backoffLimit": 1,
}
# A single-pod job's gang is always 1: no legal minAvailable differs from the default.
UNOBSERVABLE = {("spec.scheduling.minAvailable", "job")}
CASES = [(f, w) for f, table in OUTPUTS.items() for w in table if (f, w) not in UNOBSERVABLE]


def _set(data: dict[str, Any], field: str, value: Any) -> str:
    """Set ``field``; in a list, on the first item that has it (else the first). The name of
    the last such item, which <name> in OUTPUTS stands for."""
    parts = field.split(".")
    node: Any = data
    name = "data"
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if isinstance(node, list):
            node = next((item for item in node if parts[-1] in item), node[0])
            name = node.get("name", name)
    node[parts[-1]] = value
    return name


def _render(data: dict[str, Any]) -> list[dict[str, Any]]:
    doc = parse_spec(dump_yaml(data), "case.yaml")
    errors = [d for d in load.validate_document(doc) if d.is_error]
    assert not errors, errors
    return [m.obj for m in build.render_document(doc, argocd=False).manifests]


_STEP = re.compile(r"([^.\[]+)((?:\[[^\]]*\])*)")


def _value(manifests: list[dict[str, Any]], place: str, name: str) -> Any:
    """The value at `Kind path` (see explain.OUTPUTS for the notation), <name> being ``name``."""
    kind, path = (
        place.replace("<role>", "worker")
        .replace("<Role>", "Worker")
        .replace("<name>", name)
        .replace("<accelerator>", "nvidia.com/gpu")
        .split(" ", 1)
    )
    data_job = kind == "DataJob"
    node: Any = next(
        (
            m
            for m in manifests
            if m["kind"] == ("Job" if data_job else kind)
            and (m["kind"] != "Job" or m["metadata"]["name"].endswith("-data") == data_job)
        ),
        None,
    )
    for key, selectors in _STEP.findall(path):
        node = node.get(key) if isinstance(node, dict) else None
        for selector in re.findall(r"\[([^\]]*)\]", selectors):
            if isinstance(node, list):  # a runtime patch is keyed by its manager
                node = next(
                    (x for x in node if selector in (x.get("name"), x.get("manager"))), None
                )
            elif isinstance(node, dict):
                node = node.get(selector)
    return node


@pytest.mark.parametrize(("field", "workload"), CASES, ids=[f"{f}-{w}" for f, w in CASES])
def test_every_listed_output_changes_with_its_field(field, workload):
    mutation = MUTATIONS[field]
    value = (
        mutation.get(workload, mutation["*"])
        if isinstance(mutation, dict) and "*" in mutation
        else mutation
    )
    data = base(workload)
    if field == "spec.paddlejob.elastic":  # elastic mode has no PS mode (paddlejob-elastic)
        for key in ("ps", "heter", "paddlejob"):
            data["spec"].pop(key, None)
    if field == "spec.accelerator":  # it names what gpus counts
        data["spec"]["gpus"] = 1
    if field.startswith("spec.scheduling.kueue."):  # a priority class goes with a queue
        data["spec"].setdefault("scheduling", {})["kueue"] = {"queue": "team-a"}
    changed = copy.deepcopy(data)
    name = _set(changed, field, value)
    before, after = _render(data), _render(changed)
    for place in outputs(field)[workload]:
        assert _value(before, place, name) != _value(after, place, name), place


def test_every_table_field_is_a_schema_field():
    for field in OUTPUTS:
        explain(field)


def test_explain_reads_the_schema():
    doc = explain("spec.worker.replicas")
    text = format_doc(doc)
    assert "integer, 1..10000" in text
    assert "default:   1" in text
    assert "PaddleJob spec.paddleReplicaSpecs.Worker.replicas" in text


def test_list_items_need_no_index():
    assert explain("spec.volumes[0].nfs").node == explain("spec.volumes.nfs").node
    assert "server" in explain("spec.volumes[].nfs").children


def test_the_top_level_lists_the_spec_sections():
    assert list(explain().children) == [
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "overlays",
        "ignore",
    ]


def test_an_unknown_field_suggests_the_closest():
    with pytest.raises(InputError, match="did you mean 'worker'"):
        explain("spec.wokrer.replicas")


def test_a_spec_field_named_without_spec_suggests_its_full_path():
    with pytest.raises(InputError, match=r"did you mean 'spec\.worker\.replicas'\?"):
        explain("worker.replicas")


def test_field_paths_cover_nested_fields():
    paths = set(field_paths())
    assert {"spec.worker.replicas", "spec.volumes.cephfs.monitors", "spec.build.pip"} <= paths


def test_explain_describes_a_rule_by_its_id_and_anything_else_as_a_field():
    from paddlegen.report import explanation as describe
    from paddlegen.rules import REGISTRY, REQUIRED

    required = next(r for r in REGISTRY if r.id in REQUIRED)
    assert describe(required.id) == format_rule(required, required=True)
    assert describe(required.id).splitlines()[0].endswith(", required)")
    assert describe("spec.worker.replicas") == format_doc(explain("spec.worker.replicas"))
    assert describe() == format_doc(explain())
    with pytest.raises(InputError):
        describe("no-such-rule-or-field")
