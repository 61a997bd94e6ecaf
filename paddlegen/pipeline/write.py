"""Write | check: the plan written into the output folder under its lock, or compared to it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from paddlegen.errors import Interrupted
from paddlegen.events import Events
from paddlegen.output import stamp
from paddlegen.output.claim import JOB, RENDER, claim, owner
from paddlegen.output.drift import Drift, drift_of, user_files
from paddlegen.output.layout import Plan, generated_jobs
from paddlegen.output.pool import map_ordered
from paddlegen.output.removals import refuse_removals
from paddlegen.output.stamp import without_stamp
from paddlegen.output.writer import (
    Staged,
    WriteReport,
    commit,
    leftover_staging,
    output_lock,
    remove_job,
    stage_job,
    sweep_staging,
    write_job,
)
from paddlegen.pipeline.build import Rendered


def write_rendered(
    rendered: Sequence[Rendered],
    out_dir: str | Path,
    prune: bool = False,
    events: Events | None = None,
    jobs: int | None = None,
    allow_removal: bool = False,
) -> list[tuple[str, WriteReport]]:
    """Write every job (with its stamp), and remove the generated jobs ``orphans`` names (with
    ``prune``, the whole set of specs was given: every job not rendered), under the output
    lock; ``jobs`` and ``allow_removal`` as ``write_planned`` takes them."""
    out = Path(out_dir)
    with writing(out, events):
        return write_planned(rendered, out, prune, jobs, allow_removal)


@contextlib.contextmanager
def writing(out: Path, events: Events | None = None) -> Iterator[None]:
    """The output lock, held for a whole write (and the plan it writes, so that no other
    paddlegen changes a job between its stamp being read and the write). However the write
    ends early (an error, Ctrl-C, SIGTERM), jobs already swapped in stay and nothing else it
    made is left: the staging directories are swept, and a folder this call had to create is
    removed again."""
    created = not os.path.lexists(out)
    try:
        wait = events.waiting_for_lock if events else None
        with output_lock(out, on_wait=wait):  # a second render waits; no interleaved swaps
            try:
                claim(out, RENDER)  # not argocd's or kueue's folder, nor a job's
                yield
            except BaseException as exc:
                if isinstance(exc, Interrupted):  # the run's last line names what it left
                    exc.output = str(out)
                # Still under the lock, so every staging directory is this write's (or a dead
                # one's), and the workers that staged them have ended (map_ordered waits for
                # them; a second Ctrl-C that cuts the wait short may let one stage a folder
                # after this sweep, which the next render's sweep removes).
                sweep_staging(out)
                raise
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: what the failed write made, and no more
        raise


def write_planned(
    rendered: Sequence[Rendered],
    out: Path,
    prune: bool,
    jobs: int | None = None,
    allow_removal: bool = False,
) -> list[tuple[str, WriteReport]]:
    """Swap every job in, in order (call under ``writing``); a reused job is reported as it
    is. The two strategies: with ``jobs``, every changed job's new tree is staged first, on up
    to ``jobs`` processes, then each is swapped in; without, each is staged and swapped in in
    turn. If one fails, ``writing`` sweeps the rest, not the next render. An environment
    folder of a job whose spec is there goes only with ``allow_removal`` (else
    UnsafeMergeError, nothing written: output/removals.py)."""
    refuse_removals(rendered, out, allow_removal)
    fresh = [r for r in rendered if not r.reused]
    staged = iter(
        map_ordered(_stage, [(out, r.name, r.files(out)) for r in fresh], jobs) if jobs else ()
    )
    reports = []
    for r in rendered:
        if r.reused:
            reports.append((r.name, r.reused.report()))
        else:
            written = commit(next(staged)) if jobs else write_job(out, r.name, r.files(out))
            reports.append((r.name, without_stamp(written)))
    reports += [
        (name, without_stamp(remove_job(out, name))) for name in orphans(rendered, out, prune)
    ]
    return reports


def _stage(work: tuple[Path, str, Plan]) -> Staged:
    """One job's new tree staged beside its folder (in a worker, with ``jobs``)."""
    return stage_job(*work)


def orphans(rendered: Sequence[Rendered], out: Path, whole_set: bool = True) -> list[str]:
    """Generated job directories in ``out`` that no spec owns any more: those whose stamp
    names a spec that is gone, or is among ``rendered`` (it names another job now). A
    folder whose stamp names no spec (a repository that commits no stamps, the SDK's) is
    one only with the ``whole_set`` of specs (a folder or glob given): no spec rendered it."""
    names = {r.name for r in rendered}
    given = {stamp.resolved(r.file) for r in rendered}
    return [
        name
        for name in generated_jobs(out)
        if name not in names and _orphaned(out / name, given, whole_set)
    ]


def _orphaned(job_dir: Path, given: set[str], whole_set: bool) -> bool:
    spec = stamp.stamped_spec(job_dir)
    gone = whole_set if spec is None else spec in given or not os.path.isfile(spec)
    # and a job's folder: kueue's has a generated kustomization too (asked last: most
    # folders of a run over part of the specs are kept by their spec)
    return gone and owner(job_dir) is JOB


def drift(
    rendered: Sequence[Rendered], out_dir: str | Path, prune: bool = False
) -> list[tuple[str, Drift]]:
    """How the output on disk differs from ``rendered`` (nothing is written), staging
    directories left by an interrupted render included (named as they are, ``leftover``), and
    in every rendered job's folder, reused or not, the files of the user's nothing deploys;
    each with the environment its folder was rendered for alone, if it was."""
    out = Path(out_dir)
    found = [
        (
            r.name,
            # a reused job's folder was walked already: its files of the user's are known
            user_files({rel: out / r.name / rel for rel in r.reused.kept})
            if r.reused
            else drift_of(out, r.name, r.plan),
        )
        for r in rendered
    ]
    found += [(name, drift_of(out, name, {})) for name in orphans(rendered, out, prune)]
    found += [(name, Drift(leftover=True)) for name in leftover_staging(out)]
    return [(name, replace(d, env=stamp.stamped_env(out / name))) for name, d in found if d]
