"""Worker processes (-j) never outlive a killed render."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.builders import job_spec
from tests.security.trees import paddlegen_process, processes


def _children(pid: int) -> list[int]:
    return [child for child, fields in processes().items() if int(fields[1]) == pid]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_workers_die_with_a_killed_render(tmp_path):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for i in range(400):
        (jobs / f"j{i}.yaml").write_text(job_spec(f"job-{i}"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc = paddlegen_process(
        "render", str(jobs), "-o", str(tmp_path / "deploy"), "-j", "2", **quiet
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
        assert [w for w, fields in processes().items() if w in workers and fields[0] != "Z"] == []
    finally:
        if proc.poll() is None:
            proc.kill()
