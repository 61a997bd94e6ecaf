"""A write that cannot be done says which path stops it and how to get on, and leaves the
output as it was: a read-only folder in a job folder, a file that cannot be written, an
output that is a dangling symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.cli.test_gitops import repo
from tests.security.trees import tree_state


def read_only(folder: Path, monkeypatch) -> None:
    """``folder`` made read-only: chmod does not stop root, so for root the refusal is
    simulated where paddlegen asks."""
    folder.chmod(0o555)
    if os.geteuid() == 0:
        real = os.access
        monkeypatch.setattr(
            os, "access", lambda path, mode: Path(path) != folder and real(path, mode)
        )


@pytest.mark.parametrize("where", ["", "base", "overlays/prod"])
@pytest.mark.parametrize("command", [["render"], ["check", "--fix"]])
def test_a_read_only_folder_in_a_job_folder_is_named_and_nothing_is_written(
    runner, tmp_path, monkeypatch, where, command
):
    jobs, deploy = repo(tmp_path, a="1")
    spec = tmp_path / "jobs" / "a.yaml"
    spec.write_text(spec.read_text() + "overlays:\n  prod: {spec: {image: img:2}}\n")
    assert runner.invoke(cli, ["render", jobs, "-o", deploy]).exit_code == 0
    folder = tmp_path / "deploy" / "a" / where if where else tmp_path / "deploy" / "a"
    spec.write_text(spec.read_text().replace("img:1", "img:3"))
    read_only(folder, monkeypatch)
    before = tree_state(tmp_path / "deploy")
    result = runner.invoke(cli, [*command, jobs, "-o", deploy])
    assert result.exit_code == 2, result.output
    assert (
        f"paddlegen: error: {folder}: cannot write: a read-only folder, and a render replaces "
        f"the job folder {deploy}/a whole: make it writable (chmod u+w {folder}) or move it out"
    ) in result.stderr
    assert tree_state(tmp_path / "deploy") == before  # no staging folder left either
    folder.chmod(0o755)
    monkeypatch.undo()
    assert runner.invoke(cli, ["render", jobs, "-o", deploy]).exit_code == 0


def test_a_file_that_cannot_be_written_is_named(runner, tmp_path, monkeypatch):
    from paddlegen.output import writer

    jobs, deploy = repo(tmp_path, a="1")

    def full(path, text):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(writer, "_write_text", full)
    result = runner.invoke(cli, ["render", jobs, "-o", deploy])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"paddlegen: error: {deploy}/a: cannot write {deploy}/.a.")
    assert result.stderr.endswith(".tmp/kustomization.yaml: No space left on device\n")
    assert not (tmp_path / "deploy").exists()


def test_an_output_that_is_a_dangling_symlink_is_named_as_one(runner, tmp_path):
    jobs, _ = repo(tmp_path, a="1")
    link = tmp_path / "deploy"
    link.symlink_to(tmp_path / "gone")
    result = runner.invoke(cli, ["render", jobs, "-o", str(link)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"paddlegen: error: {link}: cannot write: File exists ({link} is a symlink to "
        f"{tmp_path / 'gone'}, which is not there)\n"
    )
