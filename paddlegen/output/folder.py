"""A command's own folder (argocd's, kueue's) written in place: nothing else in it changes."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from paddlegen.errors import OutputError
from paddlegen.output.claim import Writer, claim
from paddlegen.output.interrupts import deferred
from paddlegen.output.layout import Plan, is_generated
from paddlegen.output.writer import WriteReport, compare


def write_folder(out_dir: str | Path, writer: Writer, plan: Plan) -> WriteReport:
    """Write ``plan`` into ``out_dir``, the folder of ``writer`` alone: refused (OutputError,
    nothing written) when it, or a folder below it, is another command's output. The files
    paddlegen generated there and ``plan`` no longer has are removed (and a folder that held
    them, once empty); files of the user's stay, and one where ``plan`` has a file is refused.

    Each file is replaced by a rename (a reader sees the old or the new one); SIGINT and
    SIGTERM wait until every file is written, so an interrupted run leaves no mix.
    """
    claim(Path(out_dir), writer, whole=True)
    target = Path(out_dir).resolve()  # a symlinked folder: the one it points to
    if target.parent == target:
        raise OutputError(f"{out_dir}: not a folder paddlegen can write into")
    _, report = compare(target, plan, lambda _, path: is_generated(path), writer)
    if not report.written and not report.removed and target.is_dir():
        return report
    with deferred():
        for rel in report.written:
            _replace(target / rel, plan[rel])
        for rel in report.removed:
            _remove(target, rel)
    return report


def _replace(path: Path, text: str) -> None:
    """``path`` holding ``text``, swapped in by a rename; its folders made as needed."""
    temp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # 0o666 less the umask, as open() gives a new file (mkstemp would give 0600)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(temp, flags, 0o666)
        with open(fd, "w", encoding="utf-8", newline="") as fh:  # "\n" on every OS
            fh.write(text)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _remove(target: Path, rel: str) -> None:
    """A generated file removed, and the folders that held it while they are empty."""
    path = target / rel
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{path}: cannot remove: {exc.strerror or exc}") from None
    for folder in path.relative_to(target).parents:
        if folder == Path("."):
            break
        try:
            os.rmdir(target / folder)
        except OSError:
            break  # not empty: it holds something else
