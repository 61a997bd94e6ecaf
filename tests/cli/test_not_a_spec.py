"""A Kubernetes manifest where a spec belongs: one finding that says so and names the command
that converts it; and the rules' findings beside the schema's where the spec can be read."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.conftest import DATA

JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo}\nspec:\n  template:\n"
    "    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: 'x:1'}]\n"
)
MANIFESTS = {
    "batch-job": JOB,
    "list": "apiVersion: v1\nkind: List\nitems:\n  - " + JOB.replace("\n", "\n    ").rstrip(),
    "stream": "# two objects\n---\n" + JOB + "---\napiVersion: v1\nkind: Service\n",
    "trainjob": (DATA / "import" / "torch-trainjob.yaml").read_text(encoding="utf-8"),
}


def _apiversion_at(text: str) -> str:
    """line:col of the first object's apiVersion value."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip(" -").startswith("apiVersion:"):
            return f"{n}:{line.index('apiVersion:') + len('apiVersion: ') + 1}"
    raise AssertionError("no apiVersion")


@pytest.mark.parametrize("command", ["render", "validate", "check"])
@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_a_manifest_is_named_once_with_the_import_command(runner, tmp_path, command, name):
    spec = tmp_path / "my job.yaml"
    spec.write_text(MANIFESTS[name], encoding="utf-8")
    out = tmp_path / "deploy"
    args = [command, str(spec)] + (["-o", str(out)] if command != "validate" else [])
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    findings = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(findings) == 1, result.stderr
    (finding,) = findings
    assert finding.startswith(f"{spec}:{_apiversion_at(MANIFESTS[name])}: error: $.apiVersion:")
    assert "a Kubernetes manifest" in finding and "not a paddlegen spec" in finding
    assert f"paddlegen import {shlex.quote(str(spec))}" in finding
    assert not out.exists()


def test_the_named_command_makes_a_spec_of_it(runner, tmp_path):
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB, encoding="utf-8")
    finding = runner.invoke(cli, ["validate", str(manifest)]).stderr
    command = shlex.split(finding.split("make a spec of it: ", 1)[1].split(")", 1)[0])
    spec = tmp_path / "spec.yaml"
    imported = runner.invoke(cli, [*command[1:], "-o", str(spec), "--lossy"])
    assert imported.exit_code == 0, imported.output
    assert runner.invoke(cli, ["validate", str(spec)]).exit_code == 0


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("paddlegen/v2", "TrainingJob"), ("batch/v1", "TrainingJob"), ("paddlegen/v1", "Job")],
)
def test_a_misspelt_spec_header_is_no_manifest(runner, tmp_path, api_version, kind):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: a}}\n")
    result = runner.invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 1
    assert "Kubernetes manifest" not in result.stderr
    assert "[schema]" in result.stderr


SPEC = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: demo}
spec:
  image: "x:1"
  command: [python, train.py]
  resources: {limits: {memory: 1Gi}}
  env:
    - {name: LR, value: "0.1"}
    - {name: LR, value: "0.2"}
"""


def _rules(runner, tmp_path: Path, text: str) -> list[str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    result = runner.invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 1, result.output
    return [line.rsplit("[", 1)[1].rstrip("]") for line in result.stderr.splitlines()[:-1]]


def test_an_unknown_field_hides_no_finding_of_the_rules(runner, tmp_path):
    extra = SPEC.replace("  image:", "  team: ads\n  image:")
    assert _rules(runner, tmp_path, extra) == ["schema", "env-unique"]


def test_a_pods_restart_policy_is_pointed_to_spec_run(runner, tmp_path):
    """Not to dnsPolicy, the known field it is closest to."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("  image:", "  restartPolicy: Never\n  image:"), encoding="utf-8")
    (line, *_) = runner.invoke(cli, ["validate", str(spec)]).stderr.splitlines()
    assert line.endswith(
        "$.spec.restartPolicy: unknown field (a pod's restart policy is spec.run.restartPolicy, "
        "for every role) [schema]"
    )


@pytest.mark.parametrize(
    "fault",
    [
        ("  image:", "  imag:"),  # misspelt: without it, "no image" would be the rules' verdict
        ("  command:", "  workload: colective-job\n  command:"),  # a wrong value, not a field
    ],
)
def test_the_rules_wait_while_the_spec_cannot_be_read_as_written(runner, tmp_path, fault):
    assert _rules(runner, tmp_path, SPEC.replace(*fault)) == ["schema"]
