"""Worker processes (-j) never outlive a killed render."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders import job_spec


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            # The fields after the command name (which may hold spaces) start with state, ppid.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_die_with_a_killed_render(tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for i in range(400):
        (jobs / f"j{i}.yaml").write_text(job_spec(f"job-{i}"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "paddlegen",
            "render",
            str(jobs),
            "-o",
            str(tmp_path / "deploy"),
            "-j",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.005)
        assert len(workers) == 2, "the render finished before its workers were seen"
        proc.send_signal(signal.SIGKILL)  # the parent alone, as a CI timeout may do
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = [
            w
            for w in workers
            if Path(f"/proc/{w}").exists()
            and "Z" not in Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1][:3]
        ]
        assert alive == []
    finally:
        if proc.poll() is None:
            proc.kill()
