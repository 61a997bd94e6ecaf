"""A FIFO or device where paddlegen reads a file (a spec, a stamp, a generated file, a file of
`custom/`, a rendered folder): refused by name with exit 2, nothing written, and never a wait
for a writer that does not come (a render would wait holding the output lock)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES


def paddlegen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # a process of its own, so that a hang fails the test instead of stalling the run
    return subprocess.run(
        [sys.executable, "-m", "paddlegen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry below ``folder``: a file's sha256, else its kind."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink() or not path.is_file():
            out[rel] = "fifo" if path.is_fifo() else "dir" if path.is_dir() else "other"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    (tmp_path / "jobs").mkdir()
    shutil.copy(EXAMPLES / "quickstart.yaml", tmp_path / "jobs" / "quickstart.yaml")
    result = paddlegen("render", "jobs", "-o", "deploy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path


@pytest.mark.parametrize(
    "rel",
    [
        "quickstart/v1_configmap_quickstart-run.yaml",  # a generated file
        "quickstart/custom/patch.yaml",  # the user's
        "quickstart/.paddlegen-stamp",
    ],
)
@pytest.mark.parametrize("command", [("render", "jobs"), ("check", "jobs")])
def test_a_fifo_in_a_job_folder_is_refused_by_name(rendered, rel, command):
    fifo = rendered / "deploy" / rel
    fifo.parent.mkdir(exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    before = snapshot(rendered / "deploy")
    result = paddlegen(*command, "-o", "deploy", cwd=rendered)
    assert result.returncode == 2, result.stderr
    assert f"deploy/{rel}: not a regular file" in result.stderr
    assert snapshot(rendered / "deploy") == before


def test_validate_refuses_a_fifo_in_a_rendered_folder_by_name(rendered):
    fifo = rendered / "deploy" / "quickstart" / "extra.yaml"
    os.mkfifo(fifo)
    result = paddlegen("validate", "deploy", cwd=rendered)
    assert result.returncode == 2, result.stderr
    assert "deploy/quickstart/extra.yaml: cannot read: a FIFO, not a regular file" in result.stderr


@pytest.mark.parametrize("command", ["render", "validate", "check"])
def test_a_spec_that_is_a_fifo_or_a_device_is_refused_by_name(tmp_path, command):
    os.mkfifo(tmp_path / "spec.yaml")
    result = paddlegen(command, "spec.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "spec.yaml: cannot read: a FIFO, not a regular file" in result.stderr
    result = paddlegen(command, "/dev/zero", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "/dev/zero: cannot read: a character device, not a regular file" in result.stderr
