"""`paddlegen import`'s files: the inputs it reads, and where its specs go (a file per job in a
folder, one file, or stdout)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from paddlegen.authoring.import_read import read_input
from paddlegen.authoring.importer import ImportedJobs, import_jobs, several_jobs
from paddlegen.authoring.init import modeline_note, write_new_file, write_new_files
from paddlegen.errors import InputError


class SpecOutput:
    """``-o``: a folder (one that exists, or a path written with a trailing slash) gets a
    spec per job, ``FOLDER/<job>.yaml``; another path the one spec; none or ``-`` stdout."""

    def __init__(self, output: str | None) -> None:
        self.output = output
        given = bool(output) and output != "-"
        self.folder = output if given and _is_folder(output or "") else None
        self.file = output if given and not self.folder else None

    def spec_file(self, job: str) -> str:
        """The file the spec of ``job`` goes to, as its diagnostics name it."""
        if self.folder:
            return os.path.join(self.folder, f"{job}.yaml")
        return self.output or "<stdout>"

    def files(self, result: ImportedJobs) -> dict[str, str]:
        """The spec files to write (path -> text), none for stdout; InputError when two jobs
        would share one, or several would go into one spec."""
        if self.folder:
            return result.spec_files(self.spec_file)
        if len(result.jobs) > 1:
            raise InputError(several_jobs(result))
        return {self.file: result.jobs[0].text} if self.file else {}

    def write(self, files: dict[str, str], force: bool = False) -> dict[str, bool]:
        """Write ``files``, each file whether it was written (not already holding its text).
        Without ``force`` none is replaced that holds something else; in a folder, none is
        written then."""
        if self.folder:
            written = write_new_files(files, force)
            return {path: path in written for path in files}
        return {path: write_new_file(path, text, force) for path, text in files.items()}

    def modeline_note(self, files: dict[str, str]) -> str | None:
        """Why the specs got no modeline, and how they get one: said of the first, since what
        one spec of a folder lacks, every one does."""
        return next((modeline_note(path, text) for path, text in files.items()), None)


def import_files(
    names: Sequence[str], where: SpecOutput, to: str | None = None, schema: str | None = None
) -> ImportedJobs:
    """``import_jobs`` of the files ``names`` (``-``: stdin), each job's spec named after the
    file ``where`` puts it in."""
    sources = [(name if name != "-" else "<stdin>", read_input(name)) for name in names]
    return import_jobs(sources, where.spec_file, to, schema)


def _is_folder(output: str) -> bool:
    return output.endswith(("/", os.sep)) or Path(output).is_dir()
