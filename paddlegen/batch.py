"""Many specs at once, for render, check and diff: unchanged jobs skipped by their stamp,
the rest validated and rendered on every core, their new trees staged by the workers and
swapped in by this process once every spec passed. The library never prints."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from paddlegen import stamp
from paddlegen.api import load_valid, orphans, refuse_same_name, render_document
from paddlegen.errors import (
    Diagnostic,
    InputError,
    OutputError,
    PaddlegenError,
    SpecError,
    TemplateError,
)
from paddlegen.kustomize import (
    Plan,
    Staged,
    WriteReport,
    commit,
    discard,
    output_lock,
    remove_job,
    stage_job,
    write_job,
)
from paddlegen.loader import read_spec_bytes
from paddlegen.pool import map_ordered
from paddlegen.stamp import Inputs, Reused, with_stamp, without_stamp


@dataclass(frozen=True)
class Planned:
    """A spec's job directory: a plan to write, or (``reused``) already up to date on disk.

    What ``render``, ``check`` and ``diff`` need, and small enough to come back from a worker
    process; ``Rendered`` keeps the objects and positions that validation maps findings with.
    """

    file: str
    name: str
    plan: Plan
    warnings: list[Diagnostic]
    digest: str = ""
    reused: Reused | None = None
    staged: Staged | None = None  # its new tree, built and waiting to be swapped in


def plan_specs(
    paths: list[Path],
    workload: str | None = None,
    templates: str | None = None,
    *,
    argocd: bool = True,
    reuse: str | Path | None = None,
    jobs: int = 1,
    stage: bool = False,
) -> list[Planned]:
    """Like ``render_specs``, for writing and comparing: the job directories' files.

    With ``reuse`` (the output folder), a spec whose job directory there carries a matching
    stamp and untouched files is not rendered again (its ``Planned.reused`` says what is on
    disk). The rest are validated and rendered on up to ``jobs`` processes; with ``stage``
    (under the output lock), each worker also builds its job's new tree beside the old one
    (``Planned.staged``), so the files are written in parallel with the rendering. On any
    error every staged tree is discarded before the error is raised.
    """
    options = Inputs.of(workload, templates, argocd)
    raws: dict[Path, bytes] = {}  # specs read while looking for reusable jobs: not read twice
    found = _reusable(paths, Path(reuse), options, raws) if reuse else {}
    todo = [path for path in paths if path not in found]
    work = [
        (path, options, Path(reuse) if stage and reuse else None, raws.get(path)) for path in todo
    ]
    results = dict(
        zip(todo, map_ordered(_plan_one, work, jobs, warm=lambda: _warm(templates)), strict=True)
    )
    planned = [found.get(path) or results[path] for path in paths]
    try:
        _raise_first(list(results.values()))
        refuse_same_name(planned)  # type: ignore[arg-type]
    except PaddlegenError:
        _discard_staged(planned)
        raise
    return planned  # type: ignore[return-value]


def _raise_first(results: list[Planned | Exception]) -> None:
    """The errors in the order a user should see them: a missing file (exit 2) first, then
    every spec finding together, then the first other error."""
    for result in results:
        if isinstance(result, InputError):
            raise result
    errors = [d for r in results if isinstance(r, SpecError) for d in r.diagnostics]
    if errors:
        raise SpecError("invalid spec", errors)
    for result in results:
        if isinstance(result, Exception):
            raise result


def _discard_staged(planned: Sequence[Planned | Exception]) -> None:
    for p in planned:
        if isinstance(p, Planned) and p.staged is not None:
            discard(p.staged)


def _plan_one(work: tuple[Path, Inputs, Path | None, bytes | None]) -> Planned | Exception:
    """One spec from file to plan (and staged tree); errors are returned, as they cross a
    process boundary."""
    path, options, stage_in, raw = work
    try:
        raw = read_spec_bytes(path) if raw is None else raw
        doc, warnings = load_valid(path, options.workload, raw)
        r = render_document(
            doc, options.workload, options.templates, warnings, argocd=options.argocd
        )
        planned = Planned(r.file, r.name, r.plan, r.warnings, options.digest(raw))
        if stage_in is not None:
            planned = dataclasses.replace(
                planned, staged=stage_job(stage_in, r.name, with_stamp(planned))
            )
    except (InputError, SpecError, OutputError, TemplateError) as exc:
        return exc
    return planned


def render_into(
    paths: list[Path],
    out_dir: str | Path,
    workload: str | None = None,
    templates: str | None = None,
    *,
    argocd: bool = True,
    jobs: int = 1,
    prune: bool = False,
) -> tuple[list[Planned], list[tuple[str, WriteReport]]]:
    """``paddlegen render``: plan every spec, stage the changed jobs in the worker processes,
    then swap them in, in order. Any error leaves the output folder as it was (a folder this
    call had to create is removed again)."""
    out = Path(out_dir)
    created = not os.path.lexists(out)
    try:
        with output_lock(out):  # held while workers stage: a second render waits
            planned = plan_specs(
                paths, workload, templates, argocd=argocd, reuse=out, jobs=jobs, stage=True
            )
            reports = _commit_all(planned, out)
            if prune:
                reports += [
                    (name, without_stamp(remove_job(out, name))) for name in orphans(planned, out)
                ]
    except PaddlegenError:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: what the failed render made, and no more
        raise
    return planned, reports


def _commit_all(planned: list[Planned], out: Path) -> list[tuple[str, WriteReport]]:
    """Swap every staged job in, in order; if one fails, the rest are discarded, not left for
    the next render's sweep."""
    reports = []
    try:
        for p in planned:
            if p.reused:
                reports.append((p.name, p.reused.report()))
            else:
                written = commit(p.staged) if p.staged else write_job(out, p.name, with_stamp(p))
                reports.append((p.name, without_stamp(written)))
    except PaddlegenError:
        _discard_staged(planned)  # a committed one has nothing left to discard
        raise
    return reports


def _warm(templates: str | None) -> None:
    """Load what every spec needs once, before worker processes fork from this one."""
    from paddlegen.render import warm_templates
    from paddlegen.schema import warm_validator

    warm_templates(templates)
    warm_validator()


def _reusable(
    paths: list[Path], out: Path, options: Inputs, raws: dict[Path, bytes]
) -> dict[Path, Planned]:
    """The specs whose job directory in ``out`` is exactly what they render to (the bytes of
    the specs it reads go into ``raws``)."""
    by_digest: dict[str, list[tuple[Path, dict]]] = {}
    for job_dir in sorted(out.iterdir()) if out.is_dir() else []:
        body = None if job_dir.name.startswith(".") else stamp.read_stamp(job_dir)
        if body is not None:
            by_digest.setdefault(body["input"], []).append((job_dir, body))
    if not by_digest:
        return {}
    digests: dict[Path, str] = {}
    for path in paths:
        try:
            raws[path] = read_spec_bytes(path)
        except InputError:
            continue  # the full render reports it
        digests[path] = options.digest(raws[path])
    owners = Counter(digests.values())
    found: dict[Path, Planned] = {}
    for path, digest in digests.items():
        candidates = by_digest.get(digest, [])
        if owners[digest] != 1 or len(candidates) != 1:
            continue  # two specs, or two directories, with one input: render to find out why
        job_dir, body = candidates[0]
        reused = stamp.verify(job_dir, body, str(path))
        if reused is not None:
            found[path] = Planned(str(path), job_dir.name, {}, reused.warnings, digest, reused)
    return found
