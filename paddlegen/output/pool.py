"""Spreading independent per-spec work over processes (``-j/--jobs``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import mmap
    from multiprocessing.process import BaseProcess

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a second process costs more (fork, pickling) than it saves.
MIN_PER_WORKER = 8


def default_jobs() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def map_ordered(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    warm: Callable[[], None] | None = None,
    done: Callable[[int, int], None] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, on up to ``jobs`` processes, results in input order.

    Before forking, ``warm`` runs once in this process: the workers inherit what it loaded
    (compiled templates, the schema validator) instead of each building its own. Where fork is
    not available (macOS, Windows spawn fresh interpreters) the work stays in this process.
    However the call ends (Ctrl-C, SIGTERM, an error), its workers have ended when it returns
    or raises: none goes on writing after the caller cleaned up. ``done(n, total)`` is told
    how many of the items are finished, as they finish (for a progress line).
    """
    workers = min(jobs, len(items) // MIN_PER_WORKER)
    if workers <= 1:
        return _in_process(fn, items, done)
    import multiprocessing  # ~5 ms: not for the single spec of a pre-commit hook

    if "fork" not in multiprocessing.get_all_start_methods():
        return _in_process(fn, items, done)
    if warm is not None:
        warm()
    import gc
    import mmap
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from paddlegen.output.interrupts import deferred

    # Several chunks per worker: one slow chunk at the end does not leave a core idle long.
    chunk = max(1, len(items) // (workers * 8))
    stop = mmap.mmap(-1, 1)  # one byte shared with the forked workers: 1 = stop early
    others = set(multiprocessing.active_children())
    # What the workers inherit (modules, compiled templates, the validator) goes to the
    # collector's permanent generation: a collection in a worker would otherwise visit each of
    # those objects, writing to it, and so copy every page of them (copy-on-write) into each
    # worker (Python's gc.freeze documentation).
    gc.freeze()
    executor = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_start_worker,
        initargs=(os.getpid(), stop),
    )
    try:
        # The workers and the pool's threads start here: with SIGINT and SIGTERM held back,
        # no worker takes one before it has set its own handling, and no thread takes one
        # meant for this (main) thread, which would then not wake up to handle it.
        with deferred():
            # Not executor.map: leaving its results early cancels their futures, and the
            # pool's thread, which fails the futures of dead workers, cannot fail a cancelled
            # one before Python 3.12 (InvalidStateError, printed from the thread).
            parts = [
                executor.submit(_apply, fn, items[i : i + chunk])
                for i in range(0, len(items), chunk)
            ]
        results: list[R] = []
        for part in parts:
            results += part.result()
            if done is not None:
                done(len(results), len(items))
        return results
    except BrokenProcessPool:
        # A worker died (the OOM killer, say); the pool ends the others with SIGTERM, which
        # they ignore (see _start_worker), so end them here.
        _kill(set(multiprocessing.active_children()) - others)
        raise
    except BaseException:
        # Interrupted: each worker stops after the item at hand, and the shutdown below
        # waits for that. Not killed: one killed while it sends a result would leave the
        # pool's reading thread waiting for the rest of it for ever.
        stop[0] = 1
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()


_stop: mmap.mmap | None = None  # in a worker: the byte its parent sets to stop it early


def _apply(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """One chunk of items (in a worker); cut short when the parent says stop."""
    results = []
    for item in items:
        if _stop is not None and _stop[0]:
            break
        results.append(fn(item))
    return results


def _kill(workers: Collection[BaseProcess]) -> None:
    for worker in workers:
        worker.kill()
    for worker in workers:
        worker.join()


def _start_worker(parent: int, stop: mmap.mmap) -> None:
    """A worker leaves SIGINT and SIGTERM to its parent, stops when told, ends with it.

    Ctrl-C reaches every process of the terminal's foreground group, and `timeout` or
    systemd send SIGTERM to all of them: the parent alone handles both (it stops the
    workers, waits for them, then cleans up). A worker that died of one could die while it
    sends a result, and the pool would wait for the rest of it for ever.
    """
    import signal

    from paddlegen.output.interrupts import INTERRUPTS

    global _stop
    _stop = stop
    for signum in INTERRUPTS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)  # held back while the parent forked
    _die_with(parent)


def _die_with(parent: int) -> None:
    """Make this worker end when ``parent`` does, however it ends.

    A SIGKILLed render (a CI timeout, the OOM killer) cannot stop its workers, and they would
    wait for work for ever, holding its stdout and stderr open. Linux can send the worker a
    signal when its parent dies; elsewhere a dead parent shows as a broken pipe sooner or later.
    """
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError, TypeError):  # not Linux
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _in_process(
    fn: Callable[[T], R], items: Sequence[T], done: Callable[[int, int], None] | None
) -> list[R]:
    results = []
    for item in items:
        results.append(fn(item))
        if done is not None:
            done(len(results), len(items))
    return results
