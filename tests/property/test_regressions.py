"""Bugs the property tests found, pinned as plain examples (and known ones as strict xfails)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.quantity import parse
from paddlegen.validate import inputs as validation
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.manifests import validate_manifests
from tests import builders
from tests.conftest import require_tool


def render(workload: str = "job", **fields: Any) -> dict[str, dict[str, Any]]:
    """Objects by kind of a spec that must be accepted and pass kubeconform."""
    result = builders.rendered(builders.spec(workload, **fields))
    assert validate_in_process(validation.manifest_files([result], "deploy")) == []
    return {m.kind: m.obj for m in result.manifests}


def test_nano_and_micro_quantities_sum_into_the_gangs_min_resources():
    # The schema allows the n and u suffixes; summing them for minResources raised ValueError.
    assert parse("100n") * 10**9 == 100 and parse("3u") * 10**6 == 3
    requests = {"cpu": "100n", "memory": "3u"}
    objs = render(
        "paddlejob", resources={"requests": requests}, scheduling={"scheduler": "volcano"}
    )
    policy = objs["PaddleJob"]["spec"]["schedulingPolicy"]
    assert policy["minResources"] == {"cpu": "1e-07", "memory": "3e-06"}


@pytest.mark.parametrize("value", ["a\x7fb", "c\x85d", "e\u2028f", "\x9f", "g\ufffe"])
def test_values_with_characters_yaml_cannot_hold_raw_render_unchanged(value):
    # tojson left DEL and C1 controls raw (invalid YAML) and NEL/U+2028 raw (folded to a space).
    # DEL, C1 controls and U+FFFE are control-character errors now (the API server refuses them
    # in a server-side apply); silenced, they still render escaped and read back unchanged.
    doc = parse_spec(
        yaml.safe_dump(builders.spec("job", env=[{"name": "A", "value": value}])), "reg.yaml"
    )
    refused = value in ("a\x7fb", "\x9f", "g\ufffe")
    assert [d.rule for d in load.validate_document(doc) if d.is_error] == (
        ["control-character"] if refused else []
    )
    result = build.render_valid(doc)  # with its findings: it renders all the same
    assert validate_in_process(validation.manifest_files([result], "deploy")) == []
    (job,) = [m.obj for m in result.manifests if m.kind == "Job"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "A", "value": value}]


def test_float_quantities_are_written_exactly():
    # format(value, "g") kept six significant digits: 1234567.0 became 1.23457e+06. Written
    # exactly, in the API server's own spelling.
    objs = render(resources={"requests": {"cpu": 0.1234567, "memory": 1234567.0}})
    (container,) = objs["Job"]["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"] == {"cpu": "123456700n", "memory": "1234567"}


@pytest.mark.parametrize(("divisor", "written"), [(0.001, "1m"), (1, "1"), ("1m", "1m")])
def test_env_resource_divisors_are_written_as_quantity_strings(divisor, written):
    # A float divisor reached the manifest as a number; the API wants an int or a string (and
    # spells 0.001 as 1m).
    env = [
        {
            "name": "CPU",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": divisor}},
        }
    ]
    (container,) = render(env=env)["Job"]["spec"]["template"]["spec"]["containers"]
    assert container["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"] == written


@pytest.mark.parametrize("quantity", ["1e999999999", "1" * 65])
def test_quantities_too_large_to_sum_are_rejected_with_a_position(quantity):
    # The schema allowed any exponent: the gang's exact sum of 1e999999999 never finished.
    data = builders.spec(
        "job", scheduling={"scheduler": "volcano"}, resources={"requests": {"cpu": quantity}}
    )
    (error,) = [d for d in builders.diagnostics(data) if d.is_error]
    assert (error.path, error.line, error.rule) == ("$.spec.resources.requests.cpu", 12, "schema")


def test_strings_that_go_reads_as_numbers_stay_strings_for_kubeconform():
    # PyYAML wrote 1e3, 1e-05 and 0o17 unquoted (strings in YAML 1.1); Go's YAML reads numbers,
    # so kubeconform (and the API server) saw a float env value and a float sizeLimit.
    spec = {
        "env": [{"name": n, "value": v} for n, v in (("A", "1e3"), ("B", "0o17"), ("C", "1_000"))],
        "shm": 1e-05,
        "resources": {"requests": {"cpu": "1E3"}},
    }
    files = validation.manifest_files([builders.rendered(builders.spec("job", **spec))], "deploy")
    job = next(text for name, text in files if "_job_" in name)
    # (the quantities in the API server's spelling: 1e-05 is 10e-6)
    for quoted in ("'1e3'", "'0o17'", "'1_000'", "'10e-6'", "'1E3'"):
        assert quoted in job
    found, used = validate_manifests(files, kubeconform=require_tool("kubeconform"))
    assert (found, used) == ([], "kubeconform")


def test_dynamic_volume_without_a_storage_class_uses_the_default_class():
    objs = render(volumes=[{"name": "d", "mountPath": "/d", "dynamic": {}, "capacity": "1Gi"}])
    assert "storageClassName" not in objs["PersistentVolumeClaim"]["spec"]


def test_in_tree_cephfs_volume_without_a_secret_renders():
    cephfs = {"inTree": True, "monitors": ["10.0.0.1:6789"]}
    objs = render(volumes=[{"name": "c", "mountPath": "/c", "capacity": "1Gi", "cephfs": cephfs}])
    assert "secretRef" not in objs["PersistentVolume"]["spec"]["cephfs"]
