"""The public calls: one Request, and every spec validated before anything is rendered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import paddlegen
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.helpers import job_spec

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
# A negative GPU count and a literal password: what a spec must never render with.
BAD = job_spec("bad", extra="  gpus: -3\n  env: [{name: DB_PASSWORD, value: hunter2}]\n")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paddlegen", *argv], capture_output=True, text=True, cwd=ROOT
    )


def test_run_render_writes_what_the_cli_writes(tmp_path):
    result = paddlegen.run_render(paddlegen.Request([QUICKSTART], output=tmp_path / "api"))
    assert _cli("render", str(QUICKSTART), "-o", str(tmp_path / "cli")).returncode == 0
    assert [r.name for r in result.rendered] == ["quickstart"]
    assert [name for name, _ in result.written] == ["quickstart"]
    api, cli = tmp_path / "api" / "quickstart", tmp_path / "cli" / "quickstart"
    files = sorted(p.relative_to(api) for p in api.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(cli) for p in cli.rglob("*") if p.is_file())
    assert all((api / f).read_bytes() == (cli / f).read_bytes() for f in files)


def test_run_render_to_stdout_is_the_clis_stream_and_writes_nothing(tmp_path):
    request = paddlegen.Request(str(QUICKSTART), output=tmp_path, stdout=True)  # one spec
    result = paddlegen.run_render(request)
    assert result.stream == _cli("render", str(QUICKSTART), "--stdout").stdout
    assert list(tmp_path.iterdir()) == []


def test_run_check_finds_the_drift_and_fix_rewrites_it(tmp_path):
    request = paddlegen.Request([QUICKSTART], output=tmp_path)
    assert [name for name, _ in paddlegen.run_check(request).drifts] == ["quickstart"]
    fixed = paddlegen.run_check(paddlegen.Request([QUICKSTART], output=tmp_path, fix=True))
    assert fixed.drifts and fixed.written
    assert paddlegen.run_check(request).drifts == []


def test_run_validate_collects_every_finding_and_raises_none(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(BAD, encoding="utf-8")
    result = paddlegen.run_validate(paddlegen.Request([spec, QUICKSTART]))
    assert (result.specs, result.trees) == (2, 0)
    assert {d.file for d in result.diagnostics if d.is_error} == {str(spec)}


def test_a_spec_with_findings_is_never_rendered(tmp_path):
    """The same findings as `paddlegen render` prints, raised before anything is rendered."""
    spec = tmp_path / "bad.yaml"
    spec.write_text(BAD, encoding="utf-8")
    printed = _cli("render", str(spec), "--stdout")
    assert printed.returncode == 1 and printed.stdout == ""
    for render in (
        lambda: paddlegen.run_render(paddlegen.Request([spec], output=tmp_path / "out")),
        lambda: build.render_document(parse_spec(spec.read_bytes(), str(spec))),
    ):
        with pytest.raises(paddlegen.SpecError) as refused:
            render()
        assert [str(d) for d in refused.value.diagnostics if d.is_error]
        assert all(str(d) in printed.stderr for d in refused.value.diagnostics)
    assert not (tmp_path / "out").exists()
