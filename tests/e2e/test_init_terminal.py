"""`paddlegen init` at a real terminal: a pseudo-terminal, answered prompt by prompt."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import yaml

TIMEOUT = 60.0  # seconds for the whole conversation; a prompt that never comes fails the test


class Terminal:
    """A paddlegen process on a pseudo-terminal, and everything it showed so far."""

    def __init__(self, args: list[str], cwd: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "paddlegen", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={**os.environ, "TERM": "dumb"},
            start_new_session=True,  # the terminal becomes its controlling terminal
        )
        os.close(slave)
        self.shown = ""
        self.seen = 0  # what the conversation has read up to
        self.deadline = time.monotonic() + TIMEOUT

    def _read(self) -> bool:
        """Read what the process shows next; False once it closed the terminal."""
        ready, _, _ = select.select([self.master], [], [], self.deadline - time.monotonic())
        if not ready:
            raise AssertionError(f"timed out; the terminal shows:\n{self.shown}")
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: every process closed the terminal
            return False
        self.shown += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return bool(chunk)

    def expect(self, text: str) -> str:
        """Wait until ``text`` appears after what was already read; return what came before."""
        while text not in self.shown[self.seen :]:
            if not self._read():
                raise AssertionError(f"{text!r} never came; the terminal shows:\n{self.shown}")
        start = self.shown.index(text, self.seen)
        before, self.seen = self.shown[self.seen : start], start + len(text)
        return before

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")  # Enter: the terminal turns \r into \n

    def finish(self) -> int:
        while self._read():
            pass
        os.close(self.master)
        return self.process.wait(timeout=TIMEOUT)


def test_init_at_a_terminal_asks_again_at_once_with_the_reason(tmp_path):
    term = Terminal(["init", "jobs/legacy.yaml"], str(tmp_path))
    conversation = [
        (
            "Workload (job, distributed-job, paddlejob, kubeflow-paddlejob, collective-job, "
            "trainjob) [collective-job]: ",
            "3",
        ),
        ("Error: '3' is not one of", None),
        ("Workload (", "distributed-job"),
        ("Job name (a DNS-1035 label: a-z, 0-9 and '-') [legacy]: ", "Legacy_Job"),
        ("Error: 'Legacy_Job' is not a DNS-1035 label", None),
        ("Job name", "legacy-job"),
        ("Container image (with a tag): ", "paddlepaddle/paddle"),
        ("Error: image 'paddlepaddle/paddle' is not pinned to a tag", None),
        ("Container image (with a tag): ", "paddlepaddle/paddle:0.10.0"),
        ("Start command (empty: the image's): ", ""),
        ("Trainers [1]: ", "0"),
        ("Error: 0 is less than the minimum of 1", None),
        ("Trainers [1]: ", "3"),
        ("GPUs per trainer [0]: ", "1"),
        ("Gang-schedule with Volcano [y/N]: ", "y"),
        ("Storage (nfs://SERVER/PATH, ", "none"),
        ("Error: workload 'distributed-job' needs storage", None),
        ("Storage (nfs://SERVER/PATH, ", "nfs://10.12.201.10/nas"),
        ("Mount path [/mnt/data]: ", "/nas"),
    ]
    for shown, answer in conversation:
        before = term.expect(shown)
        assert "Error" not in before, term.shown  # every reason is expected above
        if answer is not None:
            term.type(answer)
    assert term.finish() == 0, term.shown
    assert "GPUs per parameter server" not in term.shown  # distributed-job has no ps role
    spec = yaml.safe_load((tmp_path / "jobs" / "legacy.yaml").read_text())
    assert spec["metadata"]["name"] == "legacy-job"
    assert spec["spec"]["worker"] == {"replicas": 3, "gpus": 1}
    assert spec["spec"]["volumes"][0]["mountPath"] == "/nas"
    validated = subprocess.run(
        [sys.executable, "-m", "paddlegen", "validate", "jobs/legacy.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (validated.returncode, validated.stderr) == (0, "1 spec valid\n")
