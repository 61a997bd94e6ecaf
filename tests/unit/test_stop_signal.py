"""The stop signal reaches the trainers, with the master wrapper as PID 1 of a PID namespace, as
in a container: the kubelet signals that process alone, and the kernel gives PID 1 only the
signals it has a handler for (shared/launcher.py FORWARDING_WRAPPER).

A stand-in for `paddleformers-cli train` starts a "launcher" child, as the CLI starts Paddle's
launcher, and handles SIGINT alone (paddleformers 1.2.0 cli/cli.py main); the child saves on
SIGTERM (it takes a moment), leaves a marker and exits 15, as the launcher does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paddlegen.workloads.shared.launcher import (
    FORWARDING_WRAPPER,
    LLM_WRAPPER,
    MASTER_SCRIPT,
    QUEUED_STOP_EXIT_CODES,
)
from tests.conftest import require_tool

CLI = """\
import subprocess, sys
launcher = subprocess.Popen([sys.executable, *sys.argv[1:]])
try:
    launcher.wait()
except KeyboardInterrupt:
    launcher.terminate()
    sys.exit(1)
sys.exit(launcher.returncode)
"""
LAUNCHER = """\
import pathlib, signal, sys, time
marker = pathlib.Path(sys.argv[1])
def stop(signum, frame):
    time.sleep(1)  # a save
    marker.write_text("saved")
    sys.exit(15)
signal.signal(signal.SIGTERM, stop)
marker.with_suffix(".ready").write_text("")
while True:
    time.sleep(0.05)
"""
ENV = {"PADDLE_NNODES": "2", "PADDLE_RANK": "1", "PADDLE_MASTER": "job-0.job:6768"}
# The target from a pod's deletion to its trainer's exit; well above the stand-in's
# one second of saving and the wrapper's one second between looks at the group.
STOPPED_WITHIN = 5.0


class Pod:
    """``script`` run with ``command`` as PID 1 of a new PID namespace."""

    def __init__(self, script: str, command: list[str], tmp: Path) -> None:
        unshare = require_tool("unshare")
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        self.marker = tmp / "saved"
        ready = self.marker.with_suffix(".ready")
        self.proc = subprocess.Popen(
            [unshare, *user, "--pid", "--fork", "--mount-proc", "/bin/sh", "-c", script, *command],
            env={"PATH": os.environ["PATH"], **ENV},
        )
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert self.proc.poll() is None, f"the pod ended at start: {self.proc.returncode}"
            assert time.monotonic() < deadline, "the stand-in launcher never started"
            time.sleep(0.05)

    def init(self) -> int:
        """The namespace's PID 1 (unshare's one child), as the host sees it."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        (pid,) = children.split()
        return int(pid)

    def stop(self, grace: float) -> tuple[int | None, float]:
        """SIGTERM to PID 1, as the kubelet sends it; SIGKILL after ``grace`` seconds. The
        exit status (None: killed) and how long it took."""
        init = self.init()
        start = time.monotonic()
        os.kill(init, signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.kill(init, signal.SIGKILL)
            self.proc.wait()
            code = None
        return code, time.monotonic() - start


def stand_in(tmp: Path, name: str, program: str) -> str:
    path = tmp / name
    path.write_text(program)
    return str(path)


def cli_command(tmp: Path) -> list[str]:
    """The stand-in CLI and its launcher child."""
    launcher = stand_in(tmp, "launcher.py", LAUNCHER)
    return [sys.executable, stand_in(tmp, "cli.py", CLI), launcher, str(tmp / "saved")]


@pytest.mark.parametrize("wrapper", [FORWARDING_WRAPPER, LLM_WRAPPER], ids=["command", "llm"])
def test_a_cli_that_starts_the_launcher_gets_the_stop_to_its_group(tmp_path, wrapper):
    pod = Pod(wrapper[2], cli_command(tmp_path), tmp_path)
    code, took = pod.stop(grace=30)
    # the CLI ends on SIGTERM at once (143); PID 1 waits for the launcher's save all the same
    assert pod.marker.read_text() == "saved"
    assert code == 143 and code in QUEUED_STOP_EXIT_CODES
    assert took < STOPPED_WITHIN


def test_the_launcher_execd_as_pid_1_stops_itself_as_before(tmp_path):
    launcher = stand_in(tmp_path, "launcher.py", LAUNCHER)
    pod = Pod(MASTER_SCRIPT, [sys.executable, launcher, str(tmp_path / "saved")], tmp_path)
    code, took = pod.stop(grace=30)
    assert (pod.marker.read_text(), code) == ("saved", 15)
    assert took < STOPPED_WITHIN


def test_execd_as_pid_1_a_cli_without_a_sigterm_handler_never_stops(tmp_path):
    """Why the wrapper forwards: exec'd, the CLI is PID 1 and ignores the SIGTERM; its
    launcher never hears of it and is killed, unsaved, at the end of the grace period."""
    pod = Pod(MASTER_SCRIPT, cli_command(tmp_path), tmp_path)
    code, took = pod.stop(grace=2)
    assert code is None and not pod.marker.exists()


def test_the_commands_own_exit_status_is_the_pods_and_nothing_is_waited_for_after_it():
    """Without a stop, PID 1 ends with the command, as the exec'd command did: a process the
    command left behind in its group is not waited for."""
    start = time.monotonic()
    done = subprocess.run(
        ["/bin/sh", "-c", FORWARDING_WRAPPER[2], "sh", "-c", "sleep 3 & exit 7"],
        env={"PATH": os.environ["PATH"], **ENV},
        check=False,
        stdout=subprocess.DEVNULL,
    )
    assert done.returncode == 7
    assert time.monotonic() - start < STOPPED_WITHIN
