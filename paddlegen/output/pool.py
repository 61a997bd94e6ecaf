"""Spreading independent per-spec work over processes (``-j/--jobs``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

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
    fn: Callable[[T], R], items: Sequence[T], jobs: int, warm: Callable[[], None] | None = None
) -> list[R]:
    """``[fn(item) for item in items]``, on up to ``jobs`` processes, results in input order.

    Before forking, ``warm`` runs once in this process: the workers inherit what it loaded
    (compiled templates, the schema validator) instead of each building its own. Where fork is
    not available (macOS, Windows spawn fresh interpreters) the work stays in this process.
    """
    workers = min(jobs, len(items) // MIN_PER_WORKER)
    if workers <= 1:
        return [fn(item) for item in items]
    import multiprocessing  # ~5 ms: not for the single spec of a pre-commit hook

    if "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    if warm is not None:
        warm()
    from concurrent.futures import ProcessPoolExecutor

    # Several chunks per worker: one slow chunk at the end does not leave a core idle long.
    chunk = max(1, len(items) // (workers * 8))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_die_with,
        initargs=(os.getpid(),),
    ) as executor:
        return list(executor.map(fn, items, chunksize=chunk))


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
