"""kustomize: the planned tree and the atomic, ownership-aware writer."""

from __future__ import annotations

import os

import pytest

from paddlegen.errors import OutputError
from paddlegen.output import writer as kustomize
from paddlegen.output.layout import HEADER
from paddlegen.output.writer import write_job


def plan(**files: str) -> dict[str, str]:
    return {name.replace("__", "."): HEADER + text for name, text in files.items()}


def tree(path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_first_write_creates_the_directory(tmp_path):
    report = write_job(tmp_path / "out", "demo", plan(a__yaml="a: 1\n"))
    assert report.written == ["a.yaml"]
    assert tree(tmp_path / "out" / "demo") == {"a.yaml": (HEADER + "a: 1\n").encode()}
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]


def test_unchanged_files_keep_their_mtime_and_stale_ones_go(tmp_path):
    write_job(tmp_path, "demo", plan(a__yaml="a: 1\n", b__yaml="b: 1\n"))
    a = tmp_path / "demo" / "a.yaml"
    os.utime(a, (1_000_000, 1_000_000))
    report = write_job(tmp_path, "demo", plan(a__yaml="a: 1\n", c__yaml="c: 1\n"))
    assert (report.written, report.unchanged, report.removed) == (
        ["c.yaml"],
        ["a.yaml"],
        ["b.yaml"],
    )
    assert a.stat().st_mtime == 1_000_000
    assert sorted(tree(tmp_path / "demo")) == ["a.yaml", "c.yaml"]


def test_nothing_changed_touches_nothing(tmp_path):
    write_job(tmp_path, "demo", plan(a__yaml="a: 1\n"))
    inode = (tmp_path / "demo").stat().st_ino
    report = write_job(tmp_path, "demo", plan(a__yaml="a: 1\n"))
    assert report.written == [] and report.unchanged == ["a.yaml"]
    assert (tmp_path / "demo").stat().st_ino == inode


def test_foreign_files_are_kept_and_never_overwritten(tmp_path):
    write_job(tmp_path, "demo", plan(a__yaml="a: 1\n"))
    (tmp_path / "demo" / "notes.md").write_text("mine\n")
    report = write_job(tmp_path, "demo", plan(a__yaml="a: 2\n"))
    assert report.kept == ["notes.md"]
    assert (tmp_path / "demo" / "notes.md").read_text() == "mine\n"

    (tmp_path / "demo" / "b.yaml").write_text("hand-written: true\n")
    before = tree(tmp_path / "demo")
    with pytest.raises(OutputError, match="did not generate: b.yaml"):
        write_job(tmp_path, "demo", plan(a__yaml="a: 3\n", b__yaml="b: 1\n"))
    assert tree(tmp_path / "demo") == before


def test_a_failed_swap_leaves_the_old_tree(tmp_path, monkeypatch):
    write_job(tmp_path, "demo", plan(a__yaml="a: 1\n"))
    before = tree(tmp_path / "demo")

    def boom(staging, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kustomize, "_swap", boom)
    with pytest.raises(OutputError, match="No space left on device"):
        write_job(tmp_path, "demo", plan(a__yaml="a: 2\n"))
    assert tree(tmp_path / "demo") == before
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]  # no staging left behind


def test_an_unwritable_output_is_an_output_error(tmp_path):
    # A regular file in the output path fails the same way as a read-only folder, also as root.
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        write_job(tmp_path / "blocker" / "out", "demo", plan(a__yaml="a: 1\n"))


def test_a_file_where_the_job_directory_should_be_is_refused(tmp_path):
    (tmp_path / "demo").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        write_job(tmp_path, "demo", plan(a__yaml="a: 1\n"))
