"""Atomic writes of job directories: stage beside, swap in, prune; one writer per output."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from paddlegen.errors import OutputError
from paddlegen.output.claim import JOB, Writer, claim
from paddlegen.output.interrupts import deferred, remove_tree
from paddlegen.output.layout import STAMP, Plan, is_custom, is_owned
from paddlegen.reading import read_bytes

try:
    import fcntl
except ImportError:  # Windows: no flock; renders into one output are not serialised there
    fcntl = None  # type: ignore[assignment]


@dataclass
class WriteReport:
    """What writing one job's folder did, file by file (paths relative to the folder)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # files paddlegen did not make, left alone


def write_job(out_dir: Path, name: str, plan: Plan) -> WriteReport:
    """Replace ``out_dir/name`` with ``plan`` in one atomic swap (``stage_job`` + ``commit``)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(failure("write", out_dir / name, exc)) from None
    return commit(stage_job(out_dir, name, plan))


@dataclass
class Staged:
    """A job's new tree, built beside the old one and not yet swapped in."""

    target: Path
    staging: Path | None  # None: the tree on disk is already the plan
    report: WriteReport


def stage_job(out_dir: Path, name: str, plan: Plan) -> Staged:
    """Build the tree ``plan`` describes in a temporary sibling of ``out_dir/name``.

    Unchanged files are hard-linked from the old tree (their mtimes stay); files paddlegen did
    not generate, and everything in `custom/`, are never overwritten and are carried over
    untouched, and so are the modes of the folders that stay (in `custom/` their times too,
    and its empty folders). Nothing visible changes
    until ``commit``; ``discard`` (or the next render's sweep) removes what ``commit`` never got.
    Several processes may stage jobs at once (render -j), under the output lock.
    """
    target = out_dir / name
    old, report = compare(target, plan, is_owned, JOB)
    foreign = report.kept
    if not report.written and not report.removed and target.is_dir():
        return Staged(target, None, report)  # nothing to do: every mtime stays
    folders = _folders(target)
    _refuse_read_only(target, folders)
    staging = None
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir))
        _fill(staging, plan, old, report.unchanged, foreign)
        _keep_folders(staging, _kept_folders(folders, plan, foreign))
    except OSError as exc:
        if staging is not None:
            remove_staging(staging)
        raise OutputError(failure("write", target, exc)) from None
    return Staged(target, staging, report)


def compare(
    target: Path, plan: Plan, owned: Callable[[str, Path], bool], writer: Writer
) -> tuple[dict[str, Path], WriteReport]:
    """The files in ``target`` (relative path -> path), and what writing ``plan`` there does:
    the files it writes or leaves as they are, the ``owned`` ones it removes, the others it
    keeps. OutputError when ``target`` is another command's output than ``writer``'s, or a
    file it keeps is where ``plan`` has a file or a folder."""
    for rel in plan:
        _check_relative(target, rel)
    old = existing_files(target)
    if old:
        claim(target, writer)
    foreign = sorted(p for p, full in old.items() if not owned(p, full))
    # a foreign file (or symlink) where the plan has a file, or a folder the plan writes into
    clash = [p for p in foreign if p in plan or any(rel.startswith(p + "/") for rel in plan)]
    if clash:
        raise OutputError(_clash_message(target, clash))
    report = WriteReport(kept=foreign)
    for rel, text in plan.items():
        current = old.get(rel)
        same = current is not None and read_bytes(current) == text.encode()
        (report.unchanged if same else report.written).append(rel)
    report.removed = sorted(p for p in old if p not in plan and p not in foreign)
    return old, report


def commit(staged: Staged) -> WriteReport:
    """Swap a staged tree in; the old one is deleted. An interrupted run leaves the old tree."""
    if staged.staging is not None:
        try:
            _swap(staged.staging, staged.target)
        except OSError as exc:
            raise OutputError(failure("write", staged.target, exc)) from None
        finally:
            left = discard(staged)  # after a swap: the old tree
        if left is not None:
            raise OutputError(
                f"{staged.target}: written, but its old tree stays at {staged.staging} "
                f"({left.strerror or left}): remove it: rm -rf {_quoted(staged.staging)}"
            )
    return staged.report


def discard(staged: Staged) -> OSError | None:
    """Remove a staged tree (or, after ``commit``, the old tree left in its place); the error
    that keeps it there, if one does."""
    if staged.staging is None or not os.path.lexists(staged.staging):
        return None
    return remove_staging(staged.staging)


def remove_staging(path: Path) -> OSError | None:
    """Delete a staging folder, paddlegen's own; None, or the error that keeps it.

    Its folders are made writable first: an old tree put aside keeps the modes its folders
    had, and one the user made read-only would keep it otherwise. Folders only: every file
    of an old tree may be a hard link to a file of the new one.
    """
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
        for root, dirs, _ in os.walk(path):
            for folder in dirs:
                full = os.path.join(root, folder)
                if not os.path.islink(full):
                    os.chmod(full, 0o700)
    try:
        remove_tree(path)
    except OSError as exc:
        return exc
    return None


def failure(action: str, target: Path, exc: OSError) -> str:
    """The message of a write or removal of ``target`` that failed, naming the path that did
    (a file inside it, a staging folder beside it) when that is another."""
    failed = os.fsdecode(exc.filename) if exc.filename is not None else str(target)
    where = "" if failed == str(target) else f" {failed}"
    why = exc.strerror or str(exc)
    if os.path.islink(target) and not os.path.exists(target):
        why += f" ({target} is a symlink to {os.readlink(target)}, which is not there)"
    return f"{target}: cannot {action}{where}: {why}"


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _clash_message(target: Path, clash: list[str]) -> str:
    """The refusal, with both ways out: a file of paddlegen's that lost its header (an editor,
    a formatter) is deleted and written anew; a file of the user's is moved away."""
    paths = [target / rel for rel in clash]
    recursive = any(p.is_dir() and not p.is_symlink() for p in paths)
    command = "rm -r " if recursive else "rm "
    return (
        f"{target}: refusing to overwrite files paddlegen did not generate: {', '.join(clash)} "
        "(they lack its header). If paddlegen wrote them, delete them and run again: "
        + command
        + " ".join(map(_quoted, paths))
        + f"; if they are yours, move them out of {target}"
    )


def _check_relative(target: Path, rel: str) -> None:
    """A planned path stays inside its job directory (a user template could name anything)."""
    parts = PurePosixPath(rel).parts
    if rel == STAMP:
        return
    if (
        not parts
        or PurePosixPath(rel).is_absolute()
        or "\\" in rel
        or any(part in ("", ".", "..") or part.startswith(".") for part in parts)
    ):
        raise OutputError(
            f"{target}: refusing to write '{rel}': not a plain relative path "
            "inside the job directory"
        )


def existing_files(target: Path) -> dict[str, Path]:
    if target.is_symlink():  # checked first: a dangling link does not "exist"
        raise OutputError(
            f"{target}: is a symlink; paddlegen writes only into a real directory it owns"
        )
    if not target.exists():
        return {}
    if not target.is_dir():
        raise OutputError(f"{target}: exists and is not a directory paddlegen can own")
    found = {}
    for p in sorted(target.rglob("*")):
        if p.is_file() or p.is_symlink():
            found[str(p.relative_to(target))] = p
        elif not p.is_dir():
            # a FIFO or device: no render can keep it (a swap moves files) nor read it
            raise OutputError(
                f"{p}: not a regular file (a FIFO, socket or device?); a job folder holds "
                "files, folders and symlinks only: remove it"
            )
    return found


def _fill(
    staging: Path, plan: Plan, old: dict[str, Path], unchanged: list[str], foreign: list[str]
) -> None:
    keep = set(unchanged)
    folders = {staging}  # made already: one mkdir per folder, not one per file

    def dest(rel: str) -> Path:
        path = staging / rel
        if path.parent not in folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            folders.update(path.parents)
        return path

    for rel, text in plan.items():
        if rel in keep:
            os.link(old[rel], dest(rel), follow_symlinks=False)
        else:
            _write_text(dest(rel), text)
    for rel in foreign:
        os.link(old[rel], dest(rel), follow_symlinks=False)
    os.chmod(staging, 0o755)  # mkdtemp makes 0700; a generated tree is an ordinary folder


def _folders(target: Path) -> dict[str, Path]:
    """Every folder of the tree at ``target`` by relative path ("." itself); none when there
    is no tree yet. Symlinks are not followed."""
    if not target.is_dir():
        return {}
    found = {".": target}
    for path in target.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            found[path.relative_to(target).as_posix()] = path
    return found


def _refuse_read_only(target: Path, folders: dict[str, Path]) -> None:
    """A folder of the old tree this process may not delete from: the swap puts the whole old
    tree aside to delete it, which would fail after the new one is in (its staging folder
    left behind). Refused first, naming the folder, when its mode says so (a read-only file
    system or another's folder fails the write itself, as the system says). A folder in
    `custom/` is the user's to make read-only: the staged tree gets its own, and the old one
    is deleted as paddlegen's (``remove_staging``)."""
    for rel, path in folders.items():
        if (
            not is_custom(rel)
            and not path.stat().st_mode & stat.S_IWUSR
            and not os.access(path, os.W_OK | os.X_OK)
        ):
            raise OutputError(
                f"{path}: cannot write: a read-only folder, and a render replaces the job "
                f"folder {target} whole: make it writable (chmod u+w {_quoted(path)}) or move "
                "it out"
            )


def _kept_folders(
    folders: dict[str, Path], plan: Plan, foreign: list[str]
) -> dict[str, os.stat_result]:
    """The old tree's ``folders`` that the new one has too, as they are: those the plan writes
    into or that hold a file of the user's, and every folder in `custom/` (an empty one too:
    the user's, as all of `custom/` is)."""
    ancestors = {str(parent) for rel in [*plan, *foreign] for parent in PurePosixPath(rel).parents}
    return {
        rel: path.stat()
        for rel, path in folders.items()
        if rel == "." or rel in ancestors or is_custom(rel)
    }


def _keep_folders(staging: Path, folders: dict[str, os.stat_result]) -> None:
    """Give the staged tree the old tree's ``folders`` as they were: each folder's mode, and
    in `custom/` its times (which the files linked into it changed), deepest first."""
    for rel, old in sorted(folders.items(), key=lambda item: -len(PurePosixPath(item[0]).parts)):
        path = staging / rel
        path.mkdir(parents=True, exist_ok=True)  # an empty folder in custom/
        if is_custom(rel):
            os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
        os.chmod(path, stat.S_IMODE(old.st_mode))  # after its subfolders: 0500 stops no mkdir


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:  # "\n" on every OS
        fh.write(text)


_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Any:
    """glibc's renameat2, else None. Looked up in the running process (dlopen(NULL)), which
    has libc loaded already: ctypes.util.find_library would run ldconfig, costing ~15 ms."""
    import ctypes

    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    except (OSError, TypeError):  # no dlopen (Windows)
        return None


def _swap(staging: Path, target: Path) -> None:
    """Put ``staging`` in place of ``target``; the old tree, if any, ends up at ``staging``."""
    if not target.exists():
        os.rename(staging, target)
        return
    renameat2 = _renameat2()
    if renameat2 is not None:
        at_fdcwd = -100
        if (
            renameat2(
                at_fdcwd, os.fsencode(staging), at_fdcwd, os.fsencode(target), _RENAME_EXCHANGE
            )
            == 0
        ):
            return  # one atomic exchange: no moment without a tree
    # Elsewhere three renames; a crash between them leaves the old tree at a hidden sibling
    # (the next render's sweep puts it back), and an interrupt waits until all three are done.
    aside = staging.with_name(staging.name + ".old")
    with deferred():
        os.rename(target, aside)
        os.rename(staging, target)
        os.rename(aside, staging)


def remove_job(out_dir: Path, name: str) -> WriteReport:
    """Delete the generated files of a job whose spec is gone; anything else stays.

    Atomic like a write: the job directory is swapped for one holding only the kept files (or
    renamed aside when nothing is kept), then the old tree is deleted.
    """
    target = out_dir / name
    report = WriteReport()
    for rel, full in existing_files(target).items():
        (report.removed if is_owned(rel, full) else report.kept).append(rel)
    if report.kept:
        write_job(out_dir, name, {})
        return report
    try:
        aside = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir))
        os.rename(target, aside / name)
    except OSError as exc:
        raise OutputError(failure("remove", target, exc)) from None
    remove_staging(aside)  # what stays is named by the next check, removed by the next sweep
    return report


# tempfile.mkdtemp names: "." + job name + "." + 8 random characters + ".tmp" (+ ".old")
_STAGING = re.compile(r"^\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9_]{8}\.tmp(\.old)?$")


LOCK_TIMEOUT = 120.0  # seconds to wait for another paddlegen writing the same output


@contextlib.contextmanager
def output_lock(
    out_dir: Path, timeout: float = LOCK_TIMEOUT, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold an exclusive lock on ``out_dir`` (flock on the directory itself, no lock file).

    Two renders into one output wait for each other instead of interleaving their swaps and
    prunes. The kernel drops the lock when a process dies, so a killed render never blocks the
    next; that one also deletes the staging directories the killed one left behind.
    ``on_wait`` is called once if another holds the lock (so a caller can say why it waits).
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd = (
            None
            if fcntl is None
            else os.open(
                out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
            )
        )
    except OSError as exc:
        raise OutputError(failure("write", out_dir, exc)) from None
    try:
        if fd is not None:
            _acquire(fd, out_dir, timeout, on_wait)
        sweep_staging(out_dir)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _acquire(fd: int, out_dir: Path, timeout: float, on_wait: Callable[[], None] | None) -> None:
    deadline = time.monotonic() + timeout
    waited = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputError(f"{out_dir}: cannot lock: {exc.strerror}") from None
        if time.monotonic() > deadline:
            raise OutputError(
                f"{out_dir}: another paddlegen has been writing here for {timeout:.0f} s"
            )
        if not waited and on_wait is not None:
            on_wait()
        waited = True
        time.sleep(0.02)


def leftover_staging(out_dir: Path) -> list[str]:
    """The staging directories a killed or interrupted render left in ``out_dir``."""
    if not out_dir.is_dir():
        return []
    return sorted(
        entry.name
        for entry in out_dir.iterdir()
        if _STAGING.match(entry.name) and entry.is_dir() and not entry.is_symlink()
    )


def sweep_staging(out_dir: Path) -> list[str]:
    """Delete staging directories left by a killed render (call only under ``output_lock``).

    Only hidden siblings are deleted, never a job directory, and an interrupt lands between
    two of them (``remove_tree``), so one that cuts the sweep short leaves nothing worse than
    staging directories for the next sweep.
    """
    swept = []
    for name in leftover_staging(out_dir):
        entry = out_dir / name
        job = out_dir / name[1:].split(".")[0]
        try:
            if name.endswith(".old") and not os.path.lexists(job):
                # The rename fallback of _swap died between its renames: the old tree.
                os.rename(entry, job)
                continue
            if remove_staging(entry) is None:
                swept.append(entry.name)
        except OSError:
            pass  # best effort (a read-only output, say): check names what stays
    return swept
