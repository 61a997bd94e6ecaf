"""Helpers for the reliability tests: an exact picture of a directory tree, and good renders."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from click.testing import CliRunner

from paddlegen.cli import cli
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
