"""The typed job model: its sections' defaults are the ones the spec schema documents."""

from __future__ import annotations

import dataclasses
import json

import pytest

from paddlegen.resources import spec_schema_path
from paddlegen.spec import model

SECTIONS = {
    "scheduling": model.Scheduling,
    "run": model.Run,
    "paddlejob": model.PaddleJobSettings,
    "kubeflow": model.KubeflowSettings,
    "distributed": model.DistributedSettings,
    "security": model.Security,
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
