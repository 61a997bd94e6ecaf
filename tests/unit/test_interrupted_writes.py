"""Ctrl-C in the middle of a write, in process: a real SIGINT, sent at a chosen step.

Python's own SIGINT handler raises KeyboardInterrupt, as it does for a library caller of
``write_rendered``; the CLI's handlers raise ``Interrupted`` the same way (tested with real
processes in tests/security/test_interrupts.py).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from paddlegen.output import interrupts, pool
from paddlegen.output import writer as kustomize
from paddlegen.output.layout import HEADER
from paddlegen.pipeline import build, write
from tests.builders import job_spec
from tests.security.trees import files_of, hidden, job_trees


@pytest.fixture(autouse=True)
def python_sigint_handler():
    """Python's own SIGINT handling, whatever this test process inherited: a shell starts a
    background job (CI's runner may) with SIGINT ignored, and Python then installs no
    handler, so no KeyboardInterrupt would come."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _interrupt_at(monkeypatch, module, name: str, call: int) -> None:
    """SIGINT this process right after the ``call``-th call of ``module.name``."""
    real = getattr(module, name)
    calls = 0

    def wrapped(*args, **kwargs):
        nonlocal calls
        result = real(*args, **kwargs)
        calls += 1
        if calls == call:
            # To this thread, not the process: with other threads running (pytest-xdist's
            # worker has them), the kernel may hand a process-wide signal to one of those,
            # and Python runs the handler some bytecodes later, past the step under test.
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        return result

    monkeypatch.setattr(module, name, wrapped)


def _rendered(tmp_path: Path, image: str) -> list[build.Rendered]:
    specs = tmp_path / f"specs-{image.replace(':', '-')}"
    specs.mkdir()
    for i in range(6):
        (specs / f"j{i}.yaml").write_text(job_spec(f"j{i}", image))
    return build.render_specs(sorted(specs.iterdir()))


def test_an_interrupted_write_keeps_whole_jobs_and_leaves_no_staging(tmp_path, monkeypatch):
    out = tmp_path / "deploy"
    write.write_rendered(_rendered(tmp_path, "img:1"), out)
    old = job_trees(out)
    new_rendered = _rendered(tmp_path, "img:2")
    # Each job writes three files (its manifest, its run record and kustomization.yaml): the
    # 10th write is the first file of the 4th job, so three jobs are swapped in and the 4th is
    # half staged.
    _interrupt_at(monkeypatch, kustomize, "_write_text", 10)
    with pytest.raises(KeyboardInterrupt):
        write.write_rendered(new_rendered, out)
    assert hidden(out) == []
    found = job_trees(out)
    assert [job for job in found if found[job] != old[job]] == ["j0", "j1", "j2"]
    assert all(found[job] == old[job] for job in ("j3", "j4", "j5"))


def test_the_rename_fallback_of_a_swap_is_not_cut_in_two(tmp_path, monkeypatch):
    """Without renameat2 a swap takes three renames; an interrupt after the first one, where
    the job directory is gone, waits until the new tree is in place."""
    out = tmp_path / "deploy"
    write.write_rendered(_rendered(tmp_path, "img:1"), out)
    new_rendered = _rendered(tmp_path, "img:2")
    monkeypatch.setattr(kustomize, "_renameat2", lambda: None)
    _interrupt_at(monkeypatch, os, "rename", 1)
    with pytest.raises(KeyboardInterrupt):
        write.write_rendered(new_rendered[:1], out)
    monkeypatch.undo()
    assert hidden(out) == []
    assert "img:2" in (out / "j0" / "batch_v1_job_j0.yaml").read_text()


def test_an_interrupt_in_the_sweep_lands_between_two_folders(tmp_path, monkeypatch):
    """An interrupt right after rmtree closed a folder's descriptor made rmtree close it again:
    the EBADF replaced the interrupt and the sweep, which tolerates OSError, went on."""
    for name in (".a.aaaaaaaa.tmp", ".b.bbbbbbbb.tmp", ".c.cccccccc.tmp"):
        (tmp_path / name / "base").mkdir(parents=True)
        (tmp_path / name / "base" / "job.yaml").write_text("kind: Job\n")
    _interrupt_at(monkeypatch, os, "close", 1)
    with pytest.raises(KeyboardInterrupt):
        kustomize.sweep_staging(tmp_path)
    monkeypatch.undo()
    assert hidden(tmp_path) == [".b.bbbbbbbb.tmp", ".c.cccccccc.tmp"]
    assert files_of(tmp_path / ".b.bbbbbbbb.tmp") == {"base/job.yaml": b"kind: Job\n"}


def test_an_interrupt_while_the_old_tree_is_deleted_stays_an_interrupt(tmp_path, monkeypatch):
    """The same inside commit, after the swap: it was an OSError there (an internal error)."""
    out = tmp_path / "deploy"
    text = HEADER + "resources: []\n"
    kustomize.write_job(out, "demo", {"base/kustomization.yaml": text})  # a folder: a dirfd
    _interrupt_at(monkeypatch, os, "close", 1)
    with pytest.raises(KeyboardInterrupt):
        kustomize.write_job(out, "demo", {"kustomization.yaml": text})
    monkeypatch.undo()
    assert hidden(out) == []
    assert files_of(out / "demo") == {"kustomization.yaml": text.encode()}


def test_a_scratch_folder_interrupted_while_removed_is_removed_and_stays_an_interrupt(
    monkeypatch,
):
    """kubeconform's scratch folder (the schemas and manifests it reads): tempfile's
    TemporaryDirectory removes it with a bare rmtree, where the interrupt could become EBADF."""
    with pytest.raises(KeyboardInterrupt), interrupts.scratch_folder("paddlegen-t-") as scratch:
        (scratch / "k8s").mkdir()
        (scratch / "k8s" / "job.json").write_text("{}")
        _interrupt_at(monkeypatch, os, "close", 1)
    monkeypatch.undo()
    assert not scratch.exists()


def _slow_item(item: tuple[Path, int]) -> int:
    """One item of work in a pool worker; item 5 interrupts the parent, then waits until the
    parent has told the workers to stop (so that the test does not depend on timing)."""
    folder, i = item
    (folder / str(i)).write_text("")
    if i == 5:
        os.kill(os.getppid(), signal.SIGINT)
        deadline = time.monotonic() + 30
        while not pool._stop[0] and time.monotonic() < deadline:
            time.sleep(0.001)
    else:
        time.sleep(0.02)
    return i


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers need fork"
)
def test_an_interrupted_pool_stops_its_workers_and_waits_for_them(tmp_path):
    """Ctrl-C reaches the workers too (the terminal's whole process group), which leave it to
    the parent: it tells them to stop after the item at hand and waits until they ended."""
    items = [(tmp_path, i) for i in range(400)]
    with pytest.raises(KeyboardInterrupt):
        pool.map_ordered(_slow_item, items, jobs=2)
    assert multiprocessing.active_children() == []  # ended and reaped
    done = {int(p.name) for p in tmp_path.iterdir()}
    # 16 chunks of 25 items. The first one stopped right after item 5, and the second one
    # (running on the other worker, ~0.5 s long) stopped too instead of running to its end.
    assert {i for i in done if i < 25} == set(range(6))
    assert max(done) < 49


def _dying_item(item: tuple[Path, int]) -> int:
    """Item 5 kills its worker, as the OOM killer would."""
    folder, i = item
    (folder / str(i)).write_text("")
    if i == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.02)
    return i


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers need fork"
)
def test_a_pool_whose_worker_died_ends_the_others_at_once(tmp_path):
    """The pool ends the other workers with SIGTERM, which they ignore (interrupts are their
    parent's business): map_ordered kills them instead of waiting for their chunks."""
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(BrokenProcessPool):
        pool.map_ordered(_dying_item, [(tmp_path, i) for i in range(400)], jobs=2)
    assert multiprocessing.active_children() == []
    assert max(int(p.name) for p in tmp_path.iterdir()) < 49  # the second chunk was cut short


def test_a_signal_during_the_cleanup_of_another_is_recognised_however_deep():
    """The command says "again while cleaning up" when a second signal cut the cleanup of the
    first short, also when the cleanup step was handling an error of its own."""
    from paddlegen.__main__ import _during
    from paddlegen.errors import Interrupted

    def second_during_cleanup() -> None:
        try:
            raise Interrupted(signal.SIGINT)
        except Interrupted:
            try:
                raise OSError("a cleanup step's own error")
            except OSError:
                raise Interrupted(signal.SIGINT) from None

    with pytest.raises(Interrupted) as raised:
        second_during_cleanup()
    assert _during(raised.value, Interrupted)
    assert not _during(Interrupted(signal.SIGTERM), Interrupted)
