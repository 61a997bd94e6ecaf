"""Files as a git commit holds them, read by one `git cat-file --batch` process for them all."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from paddlegen.errors import InputError, ToolError

# Blobs only: a symlink (120000) or a submodule (160000) is no file a kustomization builds.
_FILE_MODES = (b"100644", b"100755")


def _git_env() -> dict[str, str]:
    # A hook's GIT_DIR or GIT_WORK_TREE would point git at another repository than the one
    # holding the folder (as in paddlegen/version.py); no optional lock is taken either, so
    # reading writes nothing into the repository.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


class Committed:
    """A folder of a repository at one commit: ``folder_paths`` and ``folder_files`` its
    files, ``changed_paths`` those the work tree changes, ``read`` any other file of that
    commit; every file read through one `git cat-file --batch` process (``close`` ends
    it)."""

    def __init__(self, folder: str | Path, ref: str) -> None:
        self.ref = ref
        absolute = os.path.realpath(os.path.abspath(folder))
        self.top = self._toplevel(folder, absolute)
        relative = os.path.relpath(absolute, self.top)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            raise InputError(f"{folder}: outside the git repository at {self.top}")
        self.folder = "" if relative == os.curdir else Path(relative).as_posix()
        self.commit = self._commit(ref)
        self._batch: subprocess.Popen[bytes] | None = None
        self._tree: dict[str, bytes] | None = None

    def _git(self, *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                ["git", *args],
                cwd=cwd or self.top,
                env=_git_env(),
                capture_output=True,
                check=False,
            )
        except OSError as exc:
            raise ToolError(f"git cannot be run ({exc.strerror or exc}): plan reads git") from None

    def _toplevel(self, folder: str | Path, absolute: str) -> str:
        """The work tree holding ``folder``, asked from its parent: the folder itself may be
        new (or the repository's root), the nearest folder that exists answers."""
        start = os.path.dirname(absolute)
        while not os.path.isdir(start) and os.path.dirname(start) != start:
            start = os.path.dirname(start)
        done = self._git("rev-parse", "--show-toplevel", cwd=start)
        top = done.stdout.decode(errors="replace").strip()
        if done.returncode != 0 or not top:
            raise InputError(
                f"{folder}: not in a git repository (plan compares the folder with a commit "
                "of the repository holding it)"
            )
        return os.path.realpath(top)

    def _commit(self, ref: str) -> str:
        commit = f"{ref}^{{commit}}"
        done = self._git("rev-parse", "--verify", "--quiet", "--end-of-options", commit)
        commit = done.stdout.decode(errors="replace").strip()
        if done.returncode != 0 or not commit:
            raise InputError(f"--base {ref}: no such commit in the git repository at {self.top}")
        return commit

    def repo_path(self, path: str | Path) -> str | None:
        """``path`` (a file of the work tree) as a path of the repository; None outside it."""
        relative = os.path.relpath(os.path.realpath(os.path.abspath(path)), self.top)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return None
        return Path(relative).as_posix()

    def folder_paths(self) -> dict[str, bytes]:
        """Every regular file below the folder at the commit: its path inside the folder ->
        its object id; empty when the commit has no such folder."""
        if self._tree is None:
            args = ["ls-tree", "-r", "-z", "--full-tree", self.commit, *self._pathspec()]
            done = self._git(*args)
            if done.returncode != 0:
                raise ToolError(f"git ls-tree failed: {_said(done)}")
            self._tree = {}
            for entry in done.stdout.split(b"\0"):
                meta, _, path = entry.partition(b"\t")
                fields = meta.split()
                rel = self._inside(path)
                if len(fields) == 3 and fields[0] in _FILE_MODES and rel:
                    self._tree[rel] = fields[2]
        return self._tree

    def folder_files(self, paths: Iterable[str]) -> dict[str, bytes]:
        """The contents of files of ``folder_paths`` (path inside the folder -> bytes)."""
        oids = self.folder_paths()
        wanted = [p for p in paths if p in oids]
        found = zip(wanted, self._read_objects([oids[p] for p in wanted]), strict=True)
        return {rel: data for rel, data in found if data is not None}

    def changed_paths(self) -> set[str]:
        """The paths inside the folder where the work tree differs from the commit, as git
        sees them: tracked files changed, added or deleted, and files git does not track.
        (A file marked skip-worktree or assume-unchanged is one git does not look at.)"""
        diff = self._git(
            "diff", "--name-only", "-z", "--no-renames", self.commit, *self._pathspec()
        )
        untracked = self._git("ls-files", "-z", "--others", *self._pathspec())
        for done in (diff, untracked):
            if done.returncode != 0:
                raise ToolError(f"git {done.args[1]} failed: {_said(done)}")
        names = (diff.stdout + untracked.stdout).split(b"\0")
        return {rel for rel in map(self._inside, names) if rel}

    def _pathspec(self) -> list[str]:
        return ["--", f":(literal){self.folder}"] if self.folder else []

    def _inside(self, path: bytes) -> str | None:
        """A path of the repository (git's output) inside the folder, or None."""
        name = os.fsdecode(path)
        prefix = f"{self.folder}/" if self.folder else ""
        return name[len(prefix) :] if name.startswith(prefix) and len(name) > len(prefix) else None

    def read(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        """Files of the commit by their path in the repository; None for one it lacks."""
        names = [f"{self.commit}:{p}".encode() for p in paths]
        return dict(zip(paths, self._read_objects(names), strict=True))

    def _read_objects(self, names: Sequence[bytes]) -> list[bytes | None]:
        """The blobs named (object ids, or ``commit:path``), in order; None for what is
        missing or no blob."""
        if not names:
            return []
        process = self._process()
        assert process.stdin is not None and process.stdout is not None
        asked = [n for n in names if b"\n" not in n]  # one name a line: no other can be asked
        # Written from a thread while this one reads: git answers as it reads, and a pipe
        # buffer full both ways would stop both.
        feed = threading.Thread(target=_write, args=(process.stdin, b"\n".join(asked) + b"\n"))
        feed.start()
        try:
            found = {name: _answer(process.stdout) for name in asked}
        finally:
            feed.join()
        return [found.get(name) for name in names]

    def _process(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            try:
                self._batch = subprocess.Popen(
                    ["git", "cat-file", "--batch"],
                    cwd=self.top,
                    env=_git_env(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as exc:
                raise ToolError(f"git cannot be run ({exc.strerror or exc})") from None
        return self._batch

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None and self._batch.stdout is not None
            self._batch.stdin.close()
            self._batch.wait()
            self._batch.stdout.close()
            self._batch = None

    def __enter__(self) -> Committed:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stderr.decode(errors="replace").strip()


def _write(pipe: IO[bytes], data: bytes) -> None:
    pipe.write(data)
    pipe.flush()


def _answer(out: IO[bytes]) -> bytes | None:
    """One object of `git cat-file --batch`'s output: ``<oid> <type> <size>`` and its
    content, or ``<name> missing`` (or ``ambiguous``) alone."""
    header = out.readline()
    if not header:
        raise ToolError("git cat-file ended early")
    fields = header.split()
    if len(fields) != 3 or not fields[2].isdigit():
        return None  # missing or ambiguous: no content follows
    data = out.read(int(fields[2]) + 1)[:-1]  # the content, then a newline
    return data if fields[1] == b"blob" else None
