"""Issue #25, first contact part two: what a new user met using only the README, --help,
explain, init and the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.authoring.init import schema_reference
from paddlegen.cli import cli
from paddlegen.resources import data_root, spec_schema_path

MODELINE = "# yaml-language-server: $schema="
ROOT = Path(__file__).resolve().parents[2]


def _modeline_target(spec: Path) -> Path:
    first = spec.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), first
    reference = first.removeprefix(MODELINE)
    assert "://" not in reference  # a file on this machine, not a URL that serves nothing
    return spec.parent / reference  # an absolute reference replaces spec.parent


# 1. The modeline points at the schema file this installation ships.


def test_init_points_the_modeline_at_the_installed_schema_file(runner, tmp_path):
    spec = tmp_path / "jobs" / "demo.yaml"
    result = runner.invoke(cli, ["init", str(spec), "--no-input", "--image", "x:1"])
    assert result.exit_code == 0, result.output
    assert _modeline_target(spec).resolve() == spec_schema_path().resolve()


def test_import_points_the_modeline_at_the_installed_schema_file(runner, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: demo}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x:1}]\n"
    )
    spec = tmp_path / "out" / "demo.yaml"
    result = runner.invoke(cli, ["import", str(job), "-o", str(spec), "--lossy"])
    assert result.exit_code == 0, result.output
    assert _modeline_target(spec).resolve() == spec_schema_path().resolve()


def test_the_reference_is_relative_inside_a_checkout_like_the_examples():
    # The examples' own modeline is what init writes for a spec in examples/.
    example = data_root() / "examples" / "quickstart.yaml"
    assert schema_reference(str(example)) == "../schemas/trainingjob.v1.schema.json"
    assert schema_reference(str(example)) == schema_reference(str(example))  # deterministic


EXAMPLES = sorted(
    p for p in (ROOT / "examples").rglob("*.yaml") if p.read_text("utf-8").startswith(MODELINE)
)


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.name)
def test_every_example_modeline_reaches_the_schema(spec):
    assert _modeline_target(spec).resolve() == (ROOT / "schemas" / spec_schema_path().name)


def test_stdout_and_unrelated_folders_get_an_absolute_path():
    assert schema_reference("-") == spec_schema_path().resolve().as_posix()
    assert schema_reference(None) == spec_schema_path().resolve().as_posix()
    assert Path(schema_reference("/nonexistent-root-folder/x.yaml")).is_absolute()
