"""What a long run tells a person: a progress line at a terminal only, and why it waits."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from paddlegen.output.writer import output_lock
from tests.cli.test_gitops import repo

PADDLEGEN = [sys.executable, "-m", "paddlegen"]


def _specs(tmp_path, count: int):
    return repo(tmp_path, **{f"j{i:02d}": "1" for i in range(count)})


def test_a_render_at_a_terminal_shows_its_progress_and_clears_it(tmp_path):
    jobs, deploy = _specs(tmp_path, 25)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*PADDLEGEN, "render", jobs, "-o", deploy, "-j", "1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 0
    os.close(controller)
    text = seen.decode()
    assert "\rpaddlegen: 1/25 specs rendered" in text
    assert "\rpaddlegen: 25/25 specs rendered" in text
    assert text.index("\r\x1b[K") > text.index("25/25")  # cleared before the summary
    assert text.rstrip().endswith("25 jobs in " + deploy + ": 75 written, 0 unchanged, 0 removed")


def test_no_progress_in_a_pipe(tmp_path):
    jobs, deploy = _specs(tmp_path, 25)
    result = subprocess.run(
        [*PADDLEGEN, "render", jobs, "-o", deploy], capture_output=True, text=True, check=True
    )
    assert result.stderr == f"25 jobs in {deploy}: 75 written, 0 unchanged, 0 removed\n"


def test_a_render_says_when_it_waits_for_another_writing_the_same_output(tmp_path):
    jobs, deploy = _specs(tmp_path, 1)
    with output_lock(tmp_path / "deploy"):  # another paddlegen, as far as the render knows
        proc = subprocess.Popen(
            [*PADDLEGEN, "render", jobs, "-o", deploy],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        first = proc.stderr.readline()  # it waits for the lock, so this is the notice
    assert first == f"paddlegen: waiting for another paddlegen writing to {deploy}\n"
    assert proc.wait(timeout=60) == 0  # and it went on once the lock was free
    with proc.stderr:
        assert proc.stderr.read() == f"1 job in {deploy}: 3 written, 0 unchanged, 0 removed\n"
