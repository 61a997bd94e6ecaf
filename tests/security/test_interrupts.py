"""Ctrl-C and SIGTERM during real renders of a few hundred specs, and what a kill -9 leaves."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.security.trees import (
    assert_each_job_is_old_or_new,
    copy_tree,
    hidden,
    inodes,
    job_trees,
    paddlegen_process,
    processes,
    spec_versions,
    swapped,
)

JOBS = 300
ATTEMPTS = 5  # runs of one case until its signal lands in a running render
TIMEOUT = 60  # seconds any one paddlegen process may take
ALLOW = "--allow-removal"  # version b of the spec set drops overlays that a has

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs Linux /proc to see worker processes"
)


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """Spec folders a and b, the job trees each renders to, and a rendered copy of a."""
    root = tmp_path_factory.mktemp("versions")
    folders, trees = spec_versions(root, JOBS)
    return folders, trees, root / "out-a"


def _group(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (a render's session: it and its workers)."""
    return [p for p, fields in processes().items() if int(fields[2]) == pgid and fields[0] != "Z"]


def _run_until(
    args: list[str], ready: Callable[[], bool], act: Callable[[int], None]
) -> tuple[int, str] | None:
    """Start paddlegen ``args``; once ``ready()``, call ``act(pid)``. Its exit code and stderr,
    or None when it succeeded before it was ready (or acted on). Never a fixed sleep: a render
    may take 0.5 s on an idle machine and 5 s on a loaded one."""
    # Pipes are not read while it runs and a full one (check's diff) would stop it: files.
    with tempfile.TemporaryFile("w+") as stderr:
        proc = paddlegen_process(*args, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + TIMEOUT
        try:
            while proc.poll() is None and not ready():
                assert time.monotonic() < deadline, "no progress seen"
                time.sleep(0.0002)
            acted = proc.poll() is None
            if acted:
                act(proc.pid)
            proc.wait(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=TIMEOUT)
        stderr.seek(0)
        text = stderr.read()
    if proc.returncode == -signal.SIGKILL:  # the workers die with it, but not before it
        deadline = time.monotonic() + TIMEOUT
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
    # Every worker ended (the parent waits for them before it exits).
    assert _group(proc.pid) == []
    if not acted or proc.returncode == 0:
        return None
    return proc.returncode, text


def _fresh(out: Path, tree_a: Path) -> None:
    """``out`` as a render of version a left it."""
    if out.exists():
        shutil.rmtree(out)
    copy_tree(tree_a, out)


def _staging_seen(out: Path) -> Callable[[], bool]:
    return lambda: bool(hidden(out))


def _swap_seen(out: Path) -> Callable[[], bool]:
    before = inodes(out)
    return lambda: swapped(out, before) > 0


def _send(signum: int, group: bool) -> Callable[[int], None]:
    def send(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            (os.killpg if group else os.kill)(pid, signum)

    return send


def interrupted(signal_name: str, command: str, specs: str, out: Path, *more: str) -> str:
    """The last line of a write a signal ended: what it left, and the command that finishes."""
    return (
        f"paddlegen: interrupted by {signal_name}: {out} is partly updated (each job in it is "
        "its old tree or its new one); to finish, run the same command again: "
        f"paddlegen {command} {specs} -o {out}{''.join(' ' + m for m in more)}\n"
    )


CASES = {
    # Ctrl-C in a terminal: SIGINT to the whole foreground process group, workers included.
    "ctrl-c-while-staging": (signal.SIGINT, True, _staging_seen),
    "ctrl-c-while-swapping": (signal.SIGINT, True, _swap_seen),
    # kill PID: SIGTERM to the render alone.
    "sigterm-while-staging": (signal.SIGTERM, False, _staging_seen),
    "sigterm-while-swapping": (signal.SIGTERM, False, _swap_seen),
    # timeout(1), systemd: SIGTERM to every process of the group.
    "sigterm-to-the-group-while-staging": (signal.SIGTERM, True, _staging_seen),
}


@pytest.mark.parametrize("case", CASES)
def test_an_interrupted_render_leaves_whole_jobs_and_nothing_else(versions, tmp_path, case):
    folders, trees, tree_a = versions
    signum, group, when = CASES[case]
    out = tmp_path / "deploy"
    for _ in range(ATTEMPTS):
        _fresh(out, tree_a)
        outcome = _run_until(
            ["render", str(folders["b"]), "-o", str(out), ALLOW], when(out), _send(signum, group)
        )
        if outcome:
            break
    assert outcome, f"the render finished before the signal, {ATTEMPTS} times"
    code, stderr = outcome
    name = signal.Signals(signum).name
    said = interrupted(name, "render", str(folders["b"]), out, ALLOW)
    assert (code, stderr) == (128 + signum, said)
    assert hidden(out) == []
    which = assert_each_job_is_old_or_new(out, trees)
    if when is _swap_seen:
        assert "b" in which.values(), "a job swapped in before the signal was undone"


def test_check_fix_interrupted_while_writing(versions, tmp_path):
    """check --fix writes in this process, job after job (the API's write_rendered)."""
    folders, trees, tree_a = versions
    out = tmp_path / "deploy"
    for _ in range(ATTEMPTS):
        _fresh(out, tree_a)
        args = ["check", str(folders["b"]), "-o", str(out), "--fix", ALLOW]
        outcome = _run_until(args, _swap_seen(out), _send(signal.SIGTERM, False))
        if outcome and outcome[0] != 1:  # 1: it finished (the output was stale)
            break
    assert outcome and outcome[0] != 1, f"check --fix finished first, {ATTEMPTS} times"
    code, stderr = outcome
    assert code == 143
    # After the drift it found, one line.
    last = interrupted("SIGTERM", "check", str(folders["b"]), out, "--fix", ALLOW)
    assert stderr.endswith("\n" + last) and "Traceback" not in stderr
    assert hidden(out) == []
    assert "b" in assert_each_job_is_old_or_new(out, trees).values()


def _ctrl_c_twice(out: Path) -> tuple[Callable[[], bool], Callable[[int], None]]:
    """(ready, act): ready once half the jobs are staged; act presses Ctrl-C, waits until the
    cleanup's sweep removed a staging folder, then presses it again."""
    staged = 0

    def ready() -> bool:
        nonlocal staged
        staged = len(hidden(out))
        return staged >= JOBS // 2

    def act(pid: int) -> None:
        _send(signal.SIGINT, True)(pid)
        deadline = time.monotonic() + TIMEOUT
        # The workers may stage a few more first; fewer than when it was ready: the sweep.
        while len(hidden(out)) >= staged and time.monotonic() < deadline:
            time.sleep(0.0002)
        _send(signal.SIGINT, True)(pid)

    return ready, act


def test_a_second_ctrl_c_during_cleanup_leaves_only_staging_folders(versions, tmp_path):
    """The first Ctrl-C starts the sweep of ~150 staging folders; the second one lands in it.

    Whatever it cuts short, every job is whole (the sweep deletes only hidden siblings) and
    what is left is a staging folder that `check` reports and the next render removes.
    """
    folders, trees, tree_a = versions
    out = tmp_path / "deploy"
    for _ in range(ATTEMPTS):
        _fresh(out, tree_a)
        render = ["render", str(folders["b"]), "-o", str(out), ALLOW]
        outcome = _run_until(render, *_ctrl_c_twice(out))
        assert outcome and outcome[0] == 130, outcome
        assert_each_job_is_old_or_new(out, trees)
        if hidden(out):
            break
        # the sweep ended first
        assert outcome[1] == interrupted("SIGINT", "render", str(folders["b"]), out, ALLOW)
    left = hidden(out)
    assert left, f"the second Ctrl-C never landed in the sweep in {ATTEMPTS} runs"
    assert outcome[1] == (
        "paddlegen: interrupted by SIGINT again while cleaning up; the next render removes "
        "any staging folder left in the output folder (check lists them)\n"
    )
    _assert_reported_then_swept(folders, trees, out, left)


def test_check_reports_what_a_killed_render_left_and_render_removes_it(versions, tmp_path):
    """kill -9 cannot clean up: the staging folders stay until the next render."""
    folders, trees, tree_a = versions
    out = tmp_path / "deploy"
    _fresh(out, tree_a)
    outcome = _run_until(
        ["render", str(folders["b"]), "-o", str(out), ALLOW],
        lambda: len(hidden(out)) >= 10,
        _send(signal.SIGKILL, True),
    )
    assert outcome and outcome[0] == -signal.SIGKILL, outcome
    assert_each_job_is_old_or_new(out, trees)
    left = hidden(out)
    assert left
    _assert_reported_then_swept(folders, trees, out, left)


def _assert_reported_then_swept(folders, trees, out: Path, left: list[str]) -> None:
    for command, code in (("check", 1), ("diff", 0)):
        proc = paddlegen_process(command, str(folders["b"]), "-o", str(out))
        _, stderr = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == code, stderr
        listed = [line for line in stderr.splitlines() if line.startswith(f"extra: {out}/.")]
        assert listed == [f"extra: {out / name}/" for name in left]
        # then (check) the render that mends the jobs missing their files
        assert (
            f"paddlegen: {len(left)} staging folder(s) left in {out} by an interrupted or "
            "killed render; the next render removes them, as does: rm -rf "
            + " ".join(str(out / name) for name in left)
            + "\n"
        ) in stderr
    render = paddlegen_process("render", str(folders["b"]), "-o", str(out), ALLOW)
    _, stderr = render.communicate(timeout=TIMEOUT)
    assert render.returncode == 0, stderr
    assert hidden(out) == []
    assert job_trees(out) == trees["b"]
    check = paddlegen_process("check", str(folders["b"]), "-o", str(out))
    _, stderr = check.communicate(timeout=TIMEOUT)
    assert check.returncode == 0, stderr
