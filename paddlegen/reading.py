"""Every file paddlegen reads (specs, manifests to import, stamps, `custom/`, rendered folders):
a regular file only, opened without blocking, read up to a bound."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO

MAX_BYTES = 1024 * 1024  # a spec or a job's file is a few KB; a megabyte is a mistake or an attack

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(OSError):
    """A FIFO, device or socket where a file belongs: reading it could wait for ever (a FIFO
    without a writer) or never end (/dev/zero)."""


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for reading; IsADirectoryError or NotRegularFile (both OSErrors, with
    the reason as ``strerror``) for anything but a regular file.

    Opened non-blocking and checked before any read: opening a FIFO would otherwise wait for a
    writer (while a render holds its output lock, say), and the check is of the very file
    opened, not of a name another process could swap in between.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(0, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            kind = next((said for test, said in _KINDS if test(mode)), "a special file")
            raise NotRegularFile(0, f"{kind}, not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``: all of them, or at most ``limit`` + 1 (so that
    the caller can tell a file over the limit); OSError as ``open_regular`` raises it."""
    with open_regular(path) as fh:
        return fh.read() if limit is None else fh.read(limit + 1)


def read_text(path: str | Path) -> str:
    """The text of the regular file ``path`` as ``Path.read_text`` gives it: UTF-8, undecodable
    bytes replaced, every line break ("\\r\\n", "\\r") read as "\\n" (universal newlines)."""
    text = read_bytes(path).decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_stdin(limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of standard input (``/dev/zero`` given as stdin ends there)."""
    return sys.stdin.buffer.read(limit + 1)
