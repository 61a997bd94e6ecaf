"""SIGINT and SIGTERM held back while a step must not be cut in two."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

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
