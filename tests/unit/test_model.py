"""The typed job model: its sections' defaults are the ones the spec schema documents."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from paddlegen.resources import spec_schema_path
from paddlegen.spec import model, network, scheduling
from paddlegen.workloads import WORKLOADS

SECTIONS = {
    "scheduling": scheduling.Scheduling,
    "run": model.Run,
    "security": model.Security,
    "nccl": network.Nccl,
    # each workload's own section
    **{w.settings.section: w.settings.model for w in WORKLOADS.values() if w.settings},
}


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        target = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_a_section_type_has_the_schemas_fields_and_defaults(section):
    schema = json.loads(spec_schema_path().read_text(encoding="utf-8"))
    spec = _resolve(schema, schema["properties"]["spec"])
    fields = _resolve(schema, spec["properties"][section])["properties"]
    typed = {f.name: f for f in dataclasses.fields(SECTIONS[section])}
    assert set(typed) == set(fields)
    instance = SECTIONS[section]()
    for name, node in fields.items():
        documented = _resolve(schema, node).get("default")
        actual = getattr(instance, name)
        if section == "run" and name == "restartPolicy":
            # kept as given (None) for the operators; batch Jobs get the documented default
            assert (actual, instance.restart_policy) == (None, documented)
        else:
            assert actual == documented, name


@pytest.mark.parametrize(
    ("read", "where", "given"),
    [
        (lambda spec: model.replicas(spec.get("worker", {})), ("worker", "replicas"), 3),
        (model.accelerator, ("accelerator",), "amd.com/gpu"),
        (model.restarts, ("run", "restarts"), 2),
    ],
    ids=["replicas", "accelerator", "restarts"],
)
def test_a_field_read_once_defaults_as_the_schema_documents(read, where, given):
    schema = json.loads(spec_schema_path().read_text(encoding="utf-8"))
    node = _resolve(schema, schema["properties"]["spec"])
    for key in where:
        node = _resolve(schema, node["properties"][key])
    assert read({}) == node["default"]
    assert read(functools.reduce(lambda inner, key: {key: inner}, reversed(where), given)) == given


def _claim_modes(tmp_path, body: str, env: str | None = None) -> list[str]:
    from tests.builders import HEADER, objects_by_kind, render_file

    plan = render_file(tmp_path, HEADER + "metadata: {name: demo}\n" + body).plan
    return objects_by_kind(plan)["PersistentVolumeClaim"]["spec"]["accessModes"]


DYNAMIC = "  volumes: [{name: data, mountPath: /data, dynamic: {}, capacity: 10Gi}]\n"
JOB = "spec:\n  workload: job\n  image: img:1\n  resources: {limits: {memory: 1Gi}}\n"


def test_a_dynamic_volume_of_one_pod_defaults_to_read_write_once(tmp_path):
    """Most block and local StorageClasses provide no ReadWriteMany: a claim asking for it
    stays Pending. One pod needs no more than ReadWriteOnce."""
    assert _claim_modes(tmp_path, JOB + DYNAMIC) == ["ReadWriteOnce"]
    one_worker = JOB.replace("workload: job", "workload: paddlejob")
    assert _claim_modes(tmp_path, one_worker + DYNAMIC) == ["ReadWriteOnce"]


@pytest.mark.parametrize(
    "body",
    [
        JOB.replace("workload: job", "workload: paddlejob") + "  worker: {replicas: 2}\n",
        JOB.replace("workload: job", "workload: paddlejob") + "  ps: {replicas: 1}\n",
        JOB + "  dataPrep: {image: prep:1, volume: data}\n",  # the data Job mounts it too
    ],
)
def test_a_dynamic_volume_several_pods_mount_defaults_to_read_write_many(tmp_path, body):
    assert _claim_modes(tmp_path, body + DYNAMIC) == ["ReadWriteMany"]


def test_given_access_modes_and_the_pv_sources_default_stay(tmp_path):
    given = DYNAMIC.replace("capacity: 10Gi", "capacity: 10Gi, accessModes: [ReadWriteOncePod]")
    assert _claim_modes(tmp_path, JOB + given) == ["ReadWriteOncePod"]
    nfs = DYNAMIC.replace("dynamic: {}", "nfs: {server: 10.0.0.1, path: /d}")
    assert _claim_modes(tmp_path, JOB + nfs) == ["ReadWriteMany"]
