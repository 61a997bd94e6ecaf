"""The spec schema file: valid Draft 2020-12, accepts the documented format, rejects typos."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "schemas" / "trainingjob.v1.schema.json"
VALID_SPECS = sorted((ROOT / "tests" / "data" / "specs" / "valid").glob("*.yaml"))

# The example of the core issue ("spec format, version 1"), with a single volume source.
FULL_EXAMPLE = """
apiVersion: paddlegen/v1
kind: TrainingJob
metadata:
  name: wide-and-deep
  namespace: paddlecloud
  labels: {team: ads}
  annotations: {}
spec:
  workload: paddlejob
  image: registry.example.com/demo:v1
  imagePullPolicy: IfNotPresent
  command: [python3, train.py]
  env: [{name: EPOCHS, value: "10"}]
  resources: {requests: {cpu: "2", memory: 4Gi}, limits: {}}
  gpus: 0
  nodeSelector: {}
  shm: 2Gi
  ps:     {replicas: 2}
  worker: {replicas: 2}
  heter:  {replicas: 1}
  volumes:
    - name: data
      mountPath: /nas
      readOnly: false
      nfs: {server: 10.12.201.10, path: /nas}
      capacity: 10Gi
      accessModes: [ReadWriteMany]
      storageClassName: ""
  scheduling: {scheduler: volcano, queue: default, priorityClassName: high, minAvailable: 4}
  run: {restartPolicy: Never, backoffLimit: 0, activeDeadlineSeconds: 86400,
        ttlSecondsAfterFinished: 3600}
  paddlejob:   {cleanPodPolicy: OnCompletion, withGloo: 1, intranet: PodIP, elastic: 1}
  kubeflow:    {cleanPodPolicy: None, port: 6768}
  distributed: {volume: jobpath, trainConfigDir: quick_start, nic: eth0, port: 7164,
                portsNum: 2, portsNumSparse: 2, trainerCount: 1, hostPorts: true}
  collective:  {port: 6768}
  dataPrep:    {image: "paddlepaddle/paddle-tutorial:k8s_data", volume: data, splitCount: 3,
                outDir: /efs/job}
overlays:
  prod: {spec: {worker: {replicas: 8}}}
"""

# Keywords whose value is one subschema, a list of them, or a map of them.
_ONE = (
    "items",
    "additionalProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "$defs", "patternProperties", "dependentSchemas")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema)


def _example() -> dict[str, Any]:
    return yaml.safe_load(FULL_EXAMPLE)


def _subschemas(node: Any, where: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in ``node`` with a readable location, the root included."""
    if not isinstance(node, dict):
        return
    yield where, node
    for key in _ONE:
        if key in node:
            yield from _subschemas(node[key], f"{where}/{key}")
    for key in _LIST:
        for i, sub in enumerate(node.get(key, [])):
            yield from _subschemas(sub, f"{where}/{key}/{i}")
    for key in _MAP:
        for name, sub in node.get(key, {}).items():
            yield from _subschemas(sub, f"{where}/{key}/{name}")


def test_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://paddlegen.dev/schemas/trainingjob.v1.schema.json"
    assert schema["title"] and schema["description"]
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    "source", [FULL_EXAMPLE, *VALID_SPECS], ids=["full-example", *(p.name for p in VALID_SPECS)]
)
def test_the_full_example_and_the_valid_corpus_pass(validator, source: str | Path) -> None:
    text = source if isinstance(source, str) else source.read_text(encoding="utf-8")
    assert [e.message for e in validator.iter_errors(yaml.safe_load(text))] == []


@pytest.mark.parametrize(
    ("path", "value", "keyword"),
    [
        (("spec", "paddlejob", "cleanPolicy"), "Never", "additionalProperties"),
        (("spec", "paddlejob", "cleanPodPolicy"), "OnFailed", "enum"),
        (("spec", "paddlejob", "intranet"), "HostNetwork", "enum"),
        (("spec", "paddlejob", "withGloo"), True, "type"),
        (("spec", "run", "restartPolicy"), "Nerver", "enum"),
        (("spec", "resources", "requests", "memory"), "4GB", "pattern"),
        (("spec", "resources", "requests", "memory"), "2 Gi", "pattern"),
        (("spec", "resources", "requests", "cpu"), "abc", "pattern"),
        (("spec", "worker", "replicas"), 0, "minimum"),
        (("metadata", "name"), "Bad_Name", "pattern"),
        (("spec", "wokrer"), {"replicas": 1}, "additionalProperties"),
        (("spec", "volumes", 0, "mountPath"), "nas", "pattern"),
        (("spec", "kubeflow", "cleanPodPolicy"), "OnCompletion", "enum"),
    ],
    ids=lambda v: "/".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_bad_values_are_rejected(
    validator: Draft202012Validator, path: tuple[Any, ...], value: Any, keyword: str
) -> None:
    data = _example()
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    errors = list(validator.iter_errors(data))
    assert errors, f"{path} = {value!r} was accepted"
    # An unknown key is reported on its parent object; anything else on the value itself.
    where = path[:-1] if keyword == "additionalProperties" else path
    found = [(tuple(e.absolute_path), e.validator) for e in errors]
    assert (where, keyword) in found, found
    if keyword == "pattern":
        # Pattern messages are unreadable; the node that owns the pattern says it in words.
        assert all(e.schema.get("x-error") for e in errors if e.validator == "pattern")


@pytest.mark.parametrize("quantity", ["500m", "2", 2, 1.5, "4Gi", "0.5", "1e3", "100Mi"])
def test_kubernetes_quantities_are_accepted(validator: Draft202012Validator, quantity: Any) -> None:
    data = _example()
    data["spec"]["resources"]["requests"]["memory"] = quantity
    assert list(validator.iter_errors(data)) == []


def test_every_property_has_a_description(schema: dict[str, Any]) -> None:
    missing = [
        f"{where}/properties/{name}"
        for where, node in _subschemas(schema)
        for name, prop in node.get("properties", {}).items()
        if not (isinstance(prop, dict) and prop.get("description"))
    ]
    missing += [f"$defs/{name}" for name, d in schema["$defs"].items() if not d.get("description")]
    assert missing == []


def test_objects_are_closed(schema: dict[str, Any]) -> None:
    """Every object that lists properties forbids others, so a typo is an error. An `if`
    tests some fields of an object the node around it defines (and closes): it is no object."""
    open_objects = [
        where
        for where, node in _subschemas(schema)
        if "properties" in node
        and node.get("additionalProperties") is not False
        and not where.endswith("/if")
    ]
    assert open_objects == []


def test_patterns_live_in_defs_with_a_human_message(schema: dict[str, Any]) -> None:
    bad = [
        where
        for where, node in _subschemas(schema)
        if "pattern" in node and not (where.startswith("$/$defs/") and node.get("x-error"))
    ]
    assert bad == []


def test_inlined_definitions_keep_a_cycle_as_a_reference_and_share_their_copies() -> None:
    from paddlegen.spec.schema import _inline_refs

    ref_a, ref_b = {"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}
    schema = {
        "$defs": {
            "a": {"type": "object", "properties": {"b": ref_b}},
            "b": {"type": "object", "properties": {"a": ref_a}},
        },
        "properties": {"a": ref_a, "b": {**ref_b, "description": "x"}, "a2": ref_a},
    }
    props = _inline_refs(schema)["properties"]
    # a with b inlined in it, where a stays a reference (a cycle)
    b_in_a = {"type": "object", "properties": {"a": ref_a}}
    assert props["a"] == {"type": "object", "properties": {"b": b_in_a}}
    # b on its own: a inlined in it, where b stays a reference (not the b made inside a)
    a_in_b = {"type": "object", "properties": {"b": ref_b}}
    assert props["b"] == {"type": "object", "properties": {"a": a_in_b}, "description": "x"}
    # a definition is inlined once and its copy shared: nothing changes a schema once built
    assert props["a2"] == props["a"] and props["a2"]["properties"] is props["a"]["properties"]
