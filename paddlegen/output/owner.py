"""Which spec file a job folder belongs to: the one its stamp names, while that file is there
and names the job.

Two spec files with one ``metadata.name`` render into one job folder. In one run that is
refused (``build.same_name_diagnostics``); across runs (another file given, the same output)
the later render would silently replace the other's job, and the other's next render would
put it back. The stamp names the spec a folder was rendered from, relative to the folder
(``stamp.spec_ref``: a clone of the repository at another path finds the same file), which
tells the cases apart from the stamps a render or check reads anyway:

- the stamp names this very spec (by another path, through a symlink, from another working
  directory): its own folder;
- the file it names is gone (the spec was moved or renamed, `git mv`) or names another job
  now: the folder goes to the spec that renders it;
- otherwise this spec is refused, naming both files. Deleting or moving the other file, or
  renaming one of the jobs, is the way on: deleting the folder would leave two specs that
  take it from each other.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from paddlegen.errors import Diagnostic, PaddlegenError, Rule
from paddlegen.output.layout import STAMP
from paddlegen.output.stamp import read_stamp, stamped_spec
from paddlegen.spec.loader import Document, parse_spec, read_spec_bytes

JOB_NAME = Rule(
    "job-name",
    (
        "no two spec files name one job (`metadata.name`), in one run or across runs (a job "
        "folder's stamp names the spec file it belongs to): both would render into one folder"
    ),
    explanation=(
        "A job renders into a folder named after it. Two spec files naming one job, in one run or "
        "across runs (a job folder's stamp names the spec file it belongs to), would render into "
        "one folder and overwrite each other."
    ),
    severity="error",
)

NAME = ("metadata", "name")


def takeover_diagnostics(
    jobs: Sequence[tuple[str, str]],
    out: Path,
    stamps: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Diagnostic]:
    """An error for each spec whose job folder in ``out`` another spec file rendered, while
    that file is still there and names the job (or cannot be read to say otherwise).
    ``jobs``: spec file, job name; ``stamps``: the stamps in ``out`` by job name, when they
    were read already (``stamp.read_stamps``), else each job's stamp is read."""
    found = []
    for file, name in jobs:
        body = read_stamp(out / name) if stamps is None else stamps.get(name, {})
        owner = stamped_spec(out / name, body)
        if owner is None or owner == os.path.abspath(file) or not os.path.isfile(owner):
            continue  # most jobs: a folder of their own, or none yet; or the other spec moved
        if _same_file(owner, file):
            continue  # this spec by another path: a symlink, a hard link, another case
        other = spec_document(owner)
        if other is not None and _job_name(other) != name:
            continue  # the other spec names another job now
        found.append(_takeover(file, name, out / name, owner, still_names=other is not None))
    return found


def name_position(spec_file: str) -> tuple[int, int]:
    """Line and column of a spec's ``metadata.name``, for an error found after rendering (a
    render keeps no documents); (0, 0) when the file no longer reads."""
    doc = spec_document(spec_file)
    at = doc.where(NAME) if doc else None
    return (at.line, at.col) if at else (0, 0)


def _takeover(file: str, name: str, job_dir: Path, owner: str, still_names: bool) -> Diagnostic:
    shown = _shown(owner)
    way_out = (
        f"rename one of the jobs (metadata.name); if this spec replaces {shown}, delete or move "
        "that file first"
    )
    if not still_names:  # a spec mid-edit, or a stamp naming a file that is no spec at all
        stamp = shlex.quote(str(job_dir / STAMP))
        way_out = (
            f"if {shown} is a spec, fix it, then {way_out}; if it is no spec, the folder's "
            f"stamp names the wrong file: delete the stamp (rm {stamp}) and run again"
        )
    return Diagnostic(
        file,
        *name_position(file),  # it rendered: readable, unless it changed since
        "error",
        "$.metadata.name",
        f"job '{name}' in {job_dir} was rendered from {shown}, which "
        f"{'still names it' if still_names else 'is still there and reads as no spec'}: this "
        "spec would take the other's job over",
        JOB_NAME.id,
        way_out,
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def spec_document(spec_file: str) -> Document | None:
    """``spec_file`` parsed (not validated), None when it cannot be read as YAML."""
    try:
        return parse_spec(read_spec_bytes(spec_file), spec_file)
    except PaddlegenError:
        return None


def _job_name(doc: Document) -> str | None:
    meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def _shown(path: str) -> str:
    """``path`` as the user would type it: relative to the working directory when inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else Path(rel).as_posix()
