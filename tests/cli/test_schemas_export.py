"""`paddlegen schemas export`: the spec schema alone for editors, and every schema, compact,
for kubeconform (tests/e2e/test_pipeline_tools.py runs kubeconform with them)."""

from __future__ import annotations

import json

from paddlegen.cli import cli
from paddlegen.resources import spec_schema_path
from paddlegen.validate.kubeconform import crd_schemas_dir


def sizes(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_spec_only_writes_the_schema_editors_read_and_nothing_else(runner, tmp_path):
    result = runner.invoke(cli, ["schemas", "export", "--spec-only", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    (written,) = (tmp_path / "s").iterdir()
    assert written.name == spec_schema_path().name
    assert written.read_bytes() == spec_schema_path().read_bytes()
    assert "modeline" in result.stdout and "kubeconform" not in result.stdout


def test_the_full_export_writes_the_crd_schemas_compact_and_unchanged(runner, tmp_path):
    result = runner.invoke(cli, ["schemas", "export", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    ours = sorted(p.relative_to(crd_schemas_dir()) for p in crd_schemas_dir().rglob("*.json"))
    crds = tmp_path / "s" / "crds"
    assert sorted(p.relative_to(crds) for p in crds.rglob("*.json")) == ours
    for rel in ours:
        text = (crds / rel).read_text("utf-8")
        assert text.count("\n") == 1  # one line: indentation was most of the bytes
        assert json.loads(text) == json.loads((crd_schemas_dir() / rel).read_bytes())
    assert (crds / "SOURCES.md").is_file()
    # 6.6 MB when the CRD schemas were copied indented; the spec schema alone is 140 KB
    assert sizes(tmp_path / "s") < 3_300_000


def test_a_folder_that_cannot_be_made_is_named_with_exit_2(runner, tmp_path):
    (tmp_path / "afile").write_text("a file where the export's folder would go\n")
    result = runner.invoke(cli, ["schemas", "export", str(tmp_path / "afile" / "s")])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'afile' / 's'}: cannot write: Not a directory" in result.output
    assert "internal error" not in result.output
    assert (tmp_path / "afile").read_text() == "a file where the export's folder would go\n"
