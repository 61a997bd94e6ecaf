"""Reliability test helpers: a directory tree's exact state, good renders, processes to kill."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paddlegen.cli import cli
from paddlegen.output.layout import STAMP
from tests.conftest import EXAMPLES

GOOD_SPEC = EXAMPLES / "quickstart.yaml"


def tree_state(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry below ``root`` without following symlinks: kind, content, mode and mtime.

    Two equal states mean byte-identical files, the same links, and nothing touched.
    """
    state: dict[str, tuple[object, ...]] = {}
    if not os.path.lexists(root):
        return state
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in sorted(dirnames + filenames):
            full = Path(dirpath, entry)
            info = full.lstat()
            rel = str(full.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                state[rel] = ("dir", stat.S_IMODE(info.st_mode), info.st_mtime_ns)
            else:
                state[rel] = (
                    "file",
                    full.read_bytes(),
                    stat.S_IMODE(info.st_mode),
                    info.st_mtime_ns,
                )
    return state


def files_of(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file below ``root``."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def render_good_tree(out: Path, spec: Path = GOOD_SPEC) -> None:
    """Render ``spec`` into ``out`` (the previous good render a failing run must keep)."""
    result = CliRunner().invoke(cli, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output


def copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True, copy_function=shutil.copy2)


def paddlegen_process(
    *args: str, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE
) -> subprocess.Popen[str]:
    # A session of its own, so that a kill can take its worker processes (-j) along with it.
    return subprocess.Popen(
        [sys.executable, "-m", "paddlegen", *args],
        text=True,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def job_trees(out: Path) -> dict[str, dict[str, bytes]]:
    """Job name -> its files, for every job directory in ``out`` (hidden folders left out).
    A stamp's ``spec`` (the spec's path from the job folder) is left out: the same render into
    another output folder names it by another path."""
    return {
        p.name: {
            rel: _SPEC_REF.sub(b"", data) if rel == STAMP else data
            for rel, data in files_of(p).items()
        }
        for p in sorted(out.iterdir())
        if p.is_dir() and not p.name.startswith(".")
    }


_SPEC_REF = re.compile(rb'\n "spec": "[^"\n]*",')


def hidden(out: Path) -> list[str]:
    """What paddlegen stages beside the jobs (and must not leave behind)."""
    return sorted(name for name in os.listdir(out) if name.startswith("."))


def assert_each_job_is_old_or_new(out: Path, trees) -> dict[str, str]:
    """Every job directory is exactly tree a or exactly tree b; returns which, per job."""
    found = job_trees(out)
    assert sorted(found) == sorted(trees["a"]), "a job directory is missing or extra"
    which = {}
    for job, files in found.items():
        if files == trees["a"][job]:
            which[job] = "a"
        elif files == trees["b"][job]:
            which[job] = "b"
        else:
            pytest.fail(f"{job} is a mix of two renders: {sorted(files)}")
    return which


def inodes(out: Path) -> dict[str, int]:
    """Job name -> the inode of its directory, to count swaps with ``swapped``."""
    return {job: os.stat(out / job).st_ino for job in sorted(job_trees(out))}


def swapped(out: Path, before: dict[str, int]) -> int:
    """How many job directories are no longer the ones in ``before`` (a swap gives a new inode).

    The inode of a replaced directory cannot come back: the new tree is built while the old one
    still exists. A job missing for a moment (the two-rename fallback) counts as not swapped.
    """
    count = 0
    for job, inode in before.items():
        with contextlib.suppress(FileNotFoundError):
            count += os.stat(out / job).st_ino != inode
    return count


def spec_versions(root: Path, jobs: int) -> tuple[dict[str, Path], dict[str, Any]]:
    """Spec folders `a` and `b` of ``jobs`` specs each (every job's image differs between
    them), rendered into `out-a` and `out-b`: the folders and the job trees of each."""
    from tests.security.specsets import write_spec_set

    folders, trees = {}, {}
    for version in ("a", "b"):
        folders[version] = write_spec_set(root / version, jobs, version)
        render_good_tree(root / f"out-{version}", folders[version])
        trees[version] = job_trees(root / f"out-{version}")
    return folders, trees


def processes() -> dict[int, list[str]]:
    """Every process's /proc/PID/stat fields after its command name (which may hold spaces):
    state, ppid, pgrp, ..."""
    found = {}
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):  # ended meanwhile
            if entry.isdigit():
                stat = Path(f"/proc/{entry}/stat").read_text()
                found[int(entry)] = stat.rsplit(")", 1)[1].split()
    return found
