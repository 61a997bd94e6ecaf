"""SIGINT and SIGTERM held back while a step must not be cut in two: a swap, an rmtree, the
start of worker processes."""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held back in this thread.

    A signal that arrives meanwhile stays pending; its handler runs (and raises, for
    KeyboardInterrupt or the CLI's handlers) as the block ends. Threads started inside the
    block inherit the mask, so they never take a signal meant for the main thread. Where
    there is no ``pthread_sigmask`` (Windows) nothing is held back.
    """
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    old = mask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)


def remove_tree(path: Path, ignore_errors: bool = False) -> None:
    """``shutil.rmtree`` with SIGINT and SIGTERM held back until it is done.

    rmtree is not safe against an exception raised between two of its steps: one raised
    just after it closed a directory's descriptor makes it close that descriptor again, and
    the EBADF replaces the interrupt (which a caller that tolerates OSError then loses, and
    the CLI would report as an internal error). The trees removed here are one job's files
    or a scratch folder, so the signal waits milliseconds.
    """
    with deferred():
        shutil.rmtree(path, ignore_errors=ignore_errors)


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new temporary folder, removed (with ``remove_tree``) however the block ends."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove_tree(path, ignore_errors=True)
