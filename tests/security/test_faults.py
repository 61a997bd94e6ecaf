"""Faults while writing: killed renders, concurrent renders, a full disk, a read-only output."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from paddlegen.cli import cli
from paddlegen.output.writer import output_lock
from tests.security.specsets import write_spec_set
from tests.security.trees import (
    GOOD_SPEC,
    assert_each_job_is_old_or_new,
    hidden,
    inodes,
    job_trees,
    paddlegen_process,
    render_good_tree,
    spec_versions,
    swapped,
    tree_state,
)

LONG = os.environ.get("PADDLEGEN_LONG_TESTS") == "1"
KILLS = 60 if LONG else 6
RACES = 30 if LONG else 4
JOBS = 50
# Version b of the spec set drops the overlays of some jobs that a has: a removal, allowed.
ALLOW = "--allow-removal"


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """Spec folders a and b, and the job trees each renders to when nothing goes wrong."""
    root = tmp_path_factory.mktemp("versions")
    folders, trees = spec_versions(root, JOBS)
    assert all(trees["a"][job] != trees["b"][job] for job in trees["a"])
    return folders, trees


def _jobs_at(folder: Path, version: str) -> str:
    """``folder``'s specs made version a or b, as a commit changes them: each job keeps its
    spec file (another file naming its job would be refused as a takeover)."""
    return str(write_spec_set(folder, JOBS, version))


def _kill_at(args: list[str], out: Path, swaps: int | None, when: float) -> str:
    """Run paddlegen ``args`` and SIGKILL it at a chosen point; "killed", or "finished".

    ``swaps`` None: ``when`` seconds after the start, or as soon as a staging directory appears
    if that is sooner (start-up, rendering, the first fill). Otherwise once ``swaps`` job
    directories were swapped (0: once a staging directory appears), plus ``when`` (in [0, 1))
    times the mean time a swap took so far, to land anywhere in the next job's write. The
    write phase is found by watching the output, not by timing a render beforehand, so a kill
    lands mid-write however fast or slow the render and however loaded the machine.
    """
    before = inodes(out)
    hidden_before = set(hidden(out))
    proc = paddlegen_process(*args)
    stop = time.monotonic() + (when if swaps is None else 60)
    staged = 0.0
    while proc.poll() is None and time.monotonic() < stop:
        if not staged and set(hidden(out)) - hidden_before:
            staged = time.monotonic()  # the write phase began: a staging directory
        if staged and (swaps is None or swapped(out, before) >= swaps):
            if swaps:
                time.sleep(when * (time.monotonic() - staged) / swaps)
            break
        time.sleep(0.0002)
    outcome = "finished" if proc.poll() is not None else "killed"
    if outcome == "killed":
        # The whole process group, as a CI timeout or the OOM killer's cgroup kill would: an
        # orphaned pool worker would keep the pipes open and communicate() would wait for ever.
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    return outcome


def test_a_render_killed_at_any_moment_leaves_old_or_new_trees(versions, tmp_path):
    """Kills spread over the whole run: start-up and rendering (every third), or anywhere in
    the write of job k+1 after k of the n job swaps the render has to do (k from 0 to n-2,
    stratified so that together they cover the write phase). Each must leave every job
    exactly old or new.

    Whether a kill lands before the process exits still depends on scheduling, so rather than
    expect a share of kills to land, the loop goes on (up to 4 x KILLS runs) until at least
    KILLS // 2 kills hit a running render and one of them fell between two swaps (jobs of both
    versions on disk: the write phase was hit). Only a render that never has a moment between
    two swaps fails that; on an idle machine the first KILLS runs are enough.
    """
    _, trees = versions
    out, jobs = tmp_path / "deploy", tmp_path / "jobs"
    render_good_tree(out, Path(_jobs_at(jobs, "a")))
    rng = random.Random(int(os.environ.get("PADDLEGEN_KILL_SEED", "6")))
    # The first KILLS runs: every third a kill by time, the others at progress points in [0, 1),
    # the k-th of n in [k/n, (k+1)/n). Runs after those (if needed) pick a point at random.
    timed = set(range(2, KILLS, 3))
    points = [(k + rng.random()) / (KILLS - len(timed)) for k in range(KILLS - len(timed))]
    rng.shuffle(points)
    which = dict.fromkeys(trees["a"], "a")
    outcomes: list[str] = []
    mixed = 0

    def enough() -> bool:
        return len(outcomes) >= KILLS and outcomes.count("killed") >= KILLS // 2 and mixed > 0

    while not enough() and len(outcomes) < 4 * KILLS:
        i = len(outcomes)
        target = "b" if i % 2 == 0 else "a"
        todo = sum(version != target for version in which.values())  # the swaps it will do
        args = ["render", _jobs_at(jobs, target), "-o", str(out), ALLOW]
        if i in timed:
            outcomes.append(_kill_at(args, out, None, rng.uniform(0.0, 1.0)))
        else:
            point = points.pop() if points else rng.random()
            outcomes.append(_kill_at(args, out, int(point * max(todo - 1, 0)), rng.random()))
        previous, which = which, assert_each_job_is_old_or_new(out, trees)
        # Killed between two swaps: this render changed some jobs, and both trees occur.
        mixed += which != previous and len(set(which.values())) == 2
    assert outcomes.count("killed") >= KILLS // 2, outcomes
    assert mixed, f"no kill landed between two swaps in {len(outcomes)} runs: proves nothing"
    # The next render is not disturbed by what the killed ones left, and cleans it up.
    proc = paddlegen_process("render", _jobs_at(jobs, "b"), "-o", str(out), ALLOW)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert job_trees(out) == trees["b"]
    assert not [n for n in os.listdir(out) if n.startswith(".")], os.listdir(out)
    check = paddlegen_process("check", str(jobs), "-o", str(out))
    _, stderr = check.communicate(timeout=60)
    assert check.returncode == 0, stderr


def test_leftover_staging_directories_are_reported_then_swept(versions, tmp_path, runner):
    folders, trees = versions
    out = tmp_path / "deploy"
    render_good_tree(out, folders["a"])
    # What a render killed mid-swap leaves: a staging copy that looks like a generated job.
    stale = out / ".job-00.abcd_123.tmp"
    stale.mkdir()
    for rel, data in trees["b"]["job-00"].items():
        (stale / rel).parent.mkdir(parents=True, exist_ok=True)
        (stale / rel).write_bytes(data)
    check = runner.invoke(cli, ["check", str(folders["a"]), "-o", str(out)])
    assert check.exit_code == 1, check.output
    assert f"extra: {stale}/\n" in check.stderr
    # Not a job: validation reads job directories only.
    assert runner.invoke(cli, ["validate", str(out)]).exit_code == 0
    result = runner.invoke(cli, ["render", str(folders["a"]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert not stale.exists()
    assert runner.invoke(cli, ["check", str(folders["a"]), "-o", str(out)]).exit_code == 0


def test_a_dead_two_rename_swap_gets_its_old_tree_back(versions, tmp_path, runner):
    """Without renameat2, a render killed between its two renames left the job aside."""
    folders, trees = versions
    out = tmp_path / "deploy"
    render_good_tree(out, folders["a"])
    os.rename(out / "job-03", out / ".job-03.x1y2z3w4.tmp.old")
    result = runner.invoke(cli, ["render", str(folders["a"]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert job_trees(out) == trees["a"]
    assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_two_renders_at_once_do_not_corrupt_the_output(versions, tmp_path):
    """Spec folders a and b name the same jobs and render into one output at once. The lock
    lets one in; the other then finds every job the first one's (whose specs still name them)
    and is refused, writing nothing. Were the lock broken, both would pass that check before
    either wrote, and both would write. Every other race starts from a tree whose spec
    files moved away (either render may take it), the others from no output."""
    folders, trees = versions
    for i in range(RACES):
        out = tmp_path / f"deploy-{i}"
        if i % 2:
            moved = tmp_path / f"moved-{i}"
            shutil.copytree(folders["a"], moved)
            render_good_tree(out, moved)
            shutil.rmtree(moved)
        procs = {
            v: paddlegen_process("render", str(folders[v]), "-o", str(out), ALLOW) for v in "ab"
        }
        ends = {v: (proc.communicate(timeout=120)[1], proc.returncode) for v, proc in procs.items()}
        assert sorted(code for _, code in ends.values()) == [0, 1], ends
        (winner,) = [v for v, (_, code) in ends.items() if code == 0]
        refused = ends["b" if winner == "a" else "a"][0]
        assert "this spec would take the other's job over" in refused
        assert refused.endswith(f"paddlegen: nothing written: {JOBS} of {JOBS} specs have errors\n")
        which = assert_each_job_is_old_or_new(out, trees)
        assert set(which.values()) == {winner}, "two renders interleaved their jobs"
        assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_a_render_waits_for_the_lock(versions, tmp_path):
    _, trees = versions
    out, jobs = tmp_path / "deploy", tmp_path / "jobs"
    render_good_tree(out, Path(_jobs_at(jobs, "a")))
    before = tree_state(out)
    with output_lock(out):
        proc = paddlegen_process("render", _jobs_at(jobs, "b"), "-o", str(out), ALLOW)
        time.sleep(1.5)
        assert proc.poll() is None, proc.communicate()
        assert tree_state(out) == before
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert job_trees(out) == trees["b"]


# ---- a full disk and a read-only output: exit 2, the old tree kept ------------------------

BIG_SPEC = (
    "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: quickstart}\n"
    "spec:\n  workload: job\n  image: registry.example.com/train:1.0\n"
    "  args: ['" + "x" * 200_000 + "']\n"
)


def _grown_spec(tmp_path: Path, out: Path) -> Path:
    """A spec file of the example job rendered into ``out``, then grown to BIG_SPEC: the next
    render rewrites the job from the file it was rendered from."""
    spec = tmp_path / "quickstart.yaml"
    spec.write_bytes(GOOD_SPEC.read_bytes())
    render_good_tree(out, spec)
    spec.write_text(BIG_SPEC)
    return spec


@contextlib.contextmanager
def _tmpfs(path: Path, size: str):
    path.mkdir()
    try:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        proc = None
    if proc is None or proc.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the monkeypatched test covers it")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=10)


def test_a_full_disk_is_exit_2_and_keeps_the_old_tree(runner, tmp_path):
    with _tmpfs(tmp_path / "disk", "64k") as disk:
        out = disk / "deploy"
        spec = _grown_spec(tmp_path, out)
        before = tree_state(out)
        result = runner.invoke(cli, ["render", str(spec), "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert "No space left on device" in result.stderr
        assert "Traceback" not in result.stderr
        assert tree_state(out) == before
        assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_a_read_only_output_is_exit_2_and_keeps_the_old_tree(runner, tmp_path):
    with _tmpfs(tmp_path / "disk", "1m") as disk:
        out = disk / "deploy"
        spec = _grown_spec(tmp_path, out)
        before = tree_state(out)
        remount = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True)
        assert remount.returncode == 0, remount.stderr
        result = runner.invoke(cli, ["render", str(spec), "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert "Read-only file system" in result.stderr
        assert tree_state(out) == before


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO])
@pytest.mark.parametrize("where", ["mkdtemp", "write", "swap"])
def test_write_failures_anywhere_are_exit_2_and_keep_the_old_tree(
    runner, tmp_path, monkeypatch, code, where
):
    """The same, simulated at each step of a write (for machines where mount is not allowed)."""
    out = tmp_path / "deploy"
    spec = _grown_spec(tmp_path, out)
    before = tree_state(out)

    def fail(*_args, **_kwargs):
        raise OSError(code, os.strerror(code))

    import paddlegen.output.writer as kustomize

    if where == "mkdtemp":
        monkeypatch.setattr(tempfile, "mkdtemp", fail)
    elif where == "write":
        monkeypatch.setattr(kustomize, "_write_text", fail)
    else:
        monkeypatch.setattr(kustomize, "_swap", fail)
    result = runner.invoke(cli, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert (
        result.stderr.splitlines()[-1] == f"paddlegen: error: {out}/quickstart: cannot "
        f"write: {os.strerror(code)}"
    )
    assert tree_state(out) == before
