"""The public calls: one Request, and every spec validated before anything is rendered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import paddlegen
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.builders import job_spec

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
    assert not result.empty
    with pytest.raises(paddlegen.SpecError) as refused:
        result.refuse_invalid()
    assert refused.value.diagnostics == result.diagnostics
    valid = paddlegen.run_validate(paddlegen.Request([QUICKSTART]))
    valid.refuse_invalid()  # no error among its findings: nothing to refuse
    assert valid.summary() == "1 spec valid"
    (tmp_path / "empty").mkdir()
    assert paddlegen.run_validate(paddlegen.Request([tmp_path / "empty"])).empty


def test_the_summary_counts_each_kind_validated():
    from dataclasses import replace

    from paddlegen.validate.inputs import Validation

    counted = Validation([], specs=2, trees=1, backend=None)
    assert counted.summary() == "2 specs and 1 rendered job valid"
    assert (
        replace(counted, specs=0, setups=(None,)).summary()
        == "1 rendered job and 1 KueueSetup valid"
    )


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


def test_the_plan_writes_nothing_and_is_what_a_render_then_writes(tmp_path):
    """The plan stage reads the stamps and nothing else: a changed job's files (its stamp
    among them) are planned in memory, an unchanged one is reused as it is on disk."""
    from paddlegen.api import plan

    jobs, out = tmp_path / "jobs", tmp_path / "deploy"
    jobs.mkdir()
    for name in ("a", "b"):
        (jobs / f"{name}.yaml").write_text(job_spec(name), encoding="utf-8")
    paddlegen.run_render(paddlegen.Request([jobs], output=out))
    (jobs / "b.yaml").write_text(job_spec("b", "img:2"), encoding="utf-8")

    def tree() -> dict[str, tuple[bytes, int]]:
        return {
            str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*"))
            if p.is_file()
        }

    before = tree()
    request = paddlegen.Request([jobs], output=out)
    planned = plan(request, sorted(jobs.iterdir()))
    assert tree() == before and sorted(p.name for p in out.iterdir()) == ["a", "b"]
    reused, fresh = planned
    assert reused.reused is not None and reused.files(out) == {}
    files = fresh.files(out)
    assert ".paddlegen-stamp" in files and "img:2" in files["batch_v1_job_b.yaml"]
    paddlegen.run_render(request)
    assert {rel: (out / "b" / rel).read_text(encoding="utf-8") for rel in files} == files
