"""--schema-location and --ignore-missing-schemas: kubeconform's own options, read the same way
by kubeconform and the in-process backend, for objects paddlegen has no schema for."""

from __future__ import annotations

import json

import pytest

from paddlegen.cli import cli
from paddlegen.errors import ToolError
from paddlegen.validate import kubeconform as kc
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.locations import ExtraSchemas, expand
from tests.builders import job_spec
from tests.conftest import ROOT, require_tool
from tests.helpers import add_service_monitor

SCHEMAS = ROOT / "tests" / "data" / "schemas"
CATALOG = str(SCHEMAS / "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")
TYPO = "ServiceMonitor/a spec.endpoints[0].intervall"
# Every variable, so that a file found proves each is computed as kubeconform computes it.
EVERY_VARIABLE = (
    "{{ .NormalizedKubernetesVersion }}{{ .StrictSuffix }}/{{ .Group }}/"
    "{{ .ResourceKind }}{{ .KindSuffix }}_{{ .ResourceAPIVersion }}.json"
)
# A core-group kind, a dotted group and a capitalised one; none has a paddlegen schema.
KINDS = [("v1", "Gadget"), ("Widgets.Example.com/v2beta1", "Widget"), ("example.io/v1", "Thing")]


def _backends(binary: str, extra: ExtraSchemas, files: list[tuple[str, str]]):
    return {
        "kubeconform": kc.run_kubeconform(files, binary, extra=extra),
        "in-process": validate_in_process(files, extra=extra),
    }


@pytest.mark.parametrize("layout", ["template", "folder"])
def test_both_backends_find_the_file_kubeconform_names(tmp_path, layout):
    binary = require_tool("kubeconform")
    template = str(tmp_path / EVERY_VARIABLE) if layout == "template" else str(tmp_path)
    files = []
    for api_version, kind in KINDS:
        path = tmp_path / expand(template, api_version, kind, "1.37.0")
        path.parent.mkdir(parents=True, exist_ok=True)
        # A finding on `unknown` proves this very file was read.
        known = {name: {} for name in ("apiVersion", "kind", "metadata")}
        schema = {"properties": known, "additionalProperties": False}
        path.write_text(json.dumps({"type": "object", **schema}))
        doc = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\nunknown: 1\n"
        files.append((kind, doc))
    for backend, found in _backends(binary, ExtraSchemas((template,)), files).items():
        assert {(d.file, d.path) for d in found} == {
            (kind, f"{kind}/x unknown") for _, kind in KINDS
        }, backend


def test_ignore_missing_schemas_passes_unknown_kinds_on_both_backends():
    binary = require_tool("kubeconform")
    files = [("x.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x}\n")]
    for found in _backends(binary, ExtraSchemas(ignore_missing=True), files).values():
        assert found == []


@pytest.fixture()
def deploy(runner, tmp_path):
    """A rendered job with a ServiceMonitor in its custom/ folder."""
    (tmp_path / "a.yaml").write_text(job_spec("a"))
    out = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(tmp_path / "a.yaml"), "-o", str(out)]).exit_code == 0
    add_service_monitor(out / "a")
    return out


@pytest.fixture(params=["kubeconform", "in-process"])
def backend(request, monkeypatch, tmp_path):
    """The validator the CLI finds: kubeconform on PATH, or none (in process)."""
    monkeypatch.delenv(kc.ENV_VAR, raising=False)
    if request.param == "kubeconform":
        require_tool("kubeconform")
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return request.param


def test_validate_a_tree_with_a_kind_paddlegen_has_no_schema_for(runner, deploy, backend):
    missing = runner.invoke(cli, ["validate", str(deploy)])
    assert missing.exit_code == 2, missing.output
    assert "no schema for: monitoring.coreos.com/v1 ServiceMonitor" in missing.output
    assert "--schema-location" in missing.output and "--ignore-missing-schemas" in missing.output

    found = runner.invoke(cli, ["validate", str(deploy), "--schema-location", CATALOG])
    assert found.exit_code == 1, found.output
    assert f"{TYPO}: unknown field [{backend}]" in found.output

    skipped = runner.invoke(cli, ["validate", str(deploy), "--ignore-missing-schemas"])
    assert skipped.exit_code == 0, skipped.output


def test_in_process_refuses_an_online_location_when_it_needs_it(runner, deploy, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(kc.ENV_VAR, raising=False)
    online = "https://schemas.example.invalid/{{.ResourceKind}}.json"
    out = runner.invoke(cli, ["validate", str(deploy), "--schema-location", online])
    assert out.exit_code == 2, out.output
    assert f"schema location '{online}' is online" in out.output
    with pytest.raises(ToolError, match="local schema files only"):
        ExtraSchemas(("default",)).schema("example.com/v1", "Widget", "1.37.0")


@pytest.mark.parametrize("command", [["validate"], ["render", "--validate"], ["kueue"]])
def test_a_template_with_other_actions_is_a_usage_error(runner, tmp_path, command):
    out = runner.invoke(cli, [*command, "x.yaml", "--schema-location", "{{ .Kind }}.json"])
    assert out.exit_code == 2, out.output
    assert "{{ .Kind }} in '{{ .Kind }}.json' is not one of kubeconform's variables" in out.output


def test_render_validate_takes_the_locations(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "")  # in process: an online location would be refused if read
    (tmp_path / "a.yaml").write_text(job_spec("a"))
    args = ["render", str(tmp_path / "a.yaml"), "-o", str(tmp_path / "out"), "--validate"]
    # paddlegen's own kinds keep paddlegen's schemas: the locations come after them.
    out = runner.invoke(cli, [*args, "--schema-location", "https://x.invalid/{{.Group}}.json"])
    assert out.exit_code == 0, out.output


def test_in_process_says_so_when_a_schema_refers_to_another_file(tmp_path):
    (tmp_path / "widget.json").write_text('{"properties": {"spec": {"$ref": "other.json#/x"}}}')
    extra = ExtraSchemas((str(tmp_path / "{{.ResourceKind}}.json"),))
    files = [("x.yaml", "apiVersion: example.com/v1\nkind: Widget\nspec: 1\n")]
    with pytest.raises(ToolError, match="Widget has a \\$ref not found: .*other.json"):
        validate_in_process(files, extra=extra)
