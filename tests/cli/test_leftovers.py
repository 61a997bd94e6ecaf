"""Staging folders a killed render left (made by hand here; tests/security/test_interrupts.py
kills renders): `check` and `diff` list them, the next `render` or `check --fix` removes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.builders import job_spec

HINT = "staging folder(s) left in {out} by an interrupted or killed render; the next render"


@pytest.fixture
def rendered(runner, tmp_path):
    """Two specs rendered into deploy/, plus what an interrupted render leaves beside them: a
    staging folder, and an old tree put aside by the rename fallback of a swap."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name in ("a", "b"):
        (jobs / f"{name}.yaml").write_text(job_spec(name))
    out = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(jobs), "-o", str(out)]).exit_code == 0
    leftovers = [out / ".a.k2_9xq1m.tmp", out / ".b.0abc_def.tmp.old"]
    for folder in leftovers:
        (folder / "overlays").mkdir(parents=True)
        (folder / "kustomization.yaml").write_text("resources: []\n")
    # Hidden entries that are not paddlegen's staging: never reported, never removed.
    (out / ".git").mkdir()
    (out / ".a.not-random.tmp").mkdir()
    (out / ".gitkeep").write_text("")
    return jobs, out, leftovers


@pytest.mark.parametrize("spec", ["", "a.yaml"], ids=["folder", "one-spec"])
def test_check_lists_leftovers_as_drift(runner, rendered, spec):
    """A check of one spec sees every leftover too: any render into the folder removes them."""
    jobs, out, leftovers = rendered
    result = runner.invoke(cli, ["check", str(jobs / spec), "-o", str(out)])
    assert result.exit_code == 1
    assert result.stdout == ""  # no diff: what a staging folder holds is nobody's output
    assert result.stderr.splitlines() == [
        f"extra: {leftovers[0]}/",
        f"extra: {leftovers[1]}/",
        "paddlegen: 2 "
        + HINT.format(out=out)
        + " removes them, as does: rm -rf "
        + " ".join(map(str, leftovers)),
    ]


def test_diff_lists_leftovers_without_failing(runner, rendered):
    jobs, out, leftovers = rendered
    result = runner.invoke(cli, ["diff", str(jobs), "-o", str(out)])
    assert result.exit_code == 0
    assert f"extra: {leftovers[0]}/\n" in result.stderr
    assert f"extra: {leftovers[1]}/\n" in result.stderr


@pytest.mark.parametrize("command", [["render"], ["check", "--fix"]])
def test_the_next_write_removes_them(runner, rendered, command):
    jobs, out, leftovers = rendered
    result = runner.invoke(cli, [*command, str(jobs), "-o", str(out)])
    assert result.exit_code == (1 if "--fix" in command else 0), result.output
    if "--fix" in command:
        assert result.stderr.endswith(
            "paddlegen: rewrote 0 stale job(s), removed 2 leftover staging folder(s)\n"
        )
    assert not any(folder.exists() for folder in leftovers)
    assert sorted(p.name for p in out.iterdir()) == [
        ".a.not-random.tmp",
        ".git",
        ".gitkeep",
        "a",
        "b",
    ]
    check = runner.invoke(cli, ["check", str(jobs), "-o", str(out)])
    assert check.exit_code == 0, check.output
    assert check.stderr == f"2 jobs in {out}: up to date\n"


def test_a_leftover_with_read_only_folders_is_removed_by_the_next_render(runner, rendered):
    """An old tree put aside keeps its folders' modes: read-only ones stop no sweep."""
    jobs, out, leftovers = rendered
    (leftovers[0] / "overlays").chmod(0o555)
    leftovers[0].chmod(0o555)
    result = runner.invoke(cli, ["render", str(jobs), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert not any(folder.exists() for folder in leftovers)
    assert "could not be removed" not in result.stderr


@pytest.mark.parametrize("command", [["render"], ["check", "--fix"]])
def test_a_leftover_a_write_cannot_remove_is_named_with_the_command_that_does(
    runner, rendered, monkeypatch, command
):
    """Never "removed" when it is still there, nor "the next render removes them" for ever."""
    from paddlegen.output import writer

    jobs, out, leftovers = rendered
    stuck = leftovers[0]
    real = writer.remove_tree

    def refuse(path, *args, **kwargs):
        if Path(path) == stuck:
            raise PermissionError(1, "Operation not permitted", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(writer, "remove_tree", refuse)
    result = runner.invoke(cli, [*command, str(jobs), "-o", str(out)])
    assert result.exit_code == (1 if "--fix" in command else 0), result.output
    said = f"1 staging folder(s) could not be removed; remove them: rm -rf {stuck}\n"
    if "--fix" in command:
        assert result.stderr.endswith(
            f"paddlegen: rewrote 0 stale job(s), removed 1 leftover staging folder(s); {said}"
        )
    else:
        assert result.stderr.endswith(f"paddlegen: warning: {said}")
    assert stuck.exists() and not leftovers[1].exists()
