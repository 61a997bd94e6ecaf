"""The public calls: one ``Request`` in, and ``run_render``, ``run_check``, ``run_validate`` or
``run_merge_plan``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from paddlegen.errors import Diagnostic, ManifestError, SpecError, StaleOutputError
from paddlegen.events import Events
from paddlegen.pipeline.build import Rendered, manifest_stream, render_specs
from paddlegen.pipeline.load import collect_specs

if TYPE_CHECKING:
    from paddlegen.gitops.merge import MergePlan
    from paddlegen.output.drift import Drift
    from paddlegen.output.writer import WriteReport
    from paddlegen.validate.inputs import Validation
    from paddlegen.validate.locations import ExtraSchemas
    from paddlegen.validate.target import Server


@dataclass(frozen=True)
class Request:
    """What to render, check or validate, and how: the arguments and flags of ``paddlegen
    render``, ``check`` and ``validate``, each call reading those it needs."""

    specs: Sequence[str | Path]  # spec files, folders (searched) or globs
    output: str | Path = "deploy"  # the folder that gets one directory per job
    workload: str | None = None  # instead of each spec's spec.workload
    templates: str | None = None  # a folder of templates overriding the built-in ones by name
    argocd: bool = True  # Argo CD sync-wave and sync-options annotations
    jobs: int = 1  # processes to render with
    ignore: Sequence[str] = ()  # rules silenced in every spec
    # The job folders whose stamp's spec is gone are removed either way; with ``prune`` also
    # those whose stamp names no spec that no spec given renders. None: when ``specs`` name a
    # folder or a glob, the whole set of specs (a spec file left out may be one not given).
    prune: bool | None = None
    stdout: bool = False  # run_render: the manifests as one stream (``Result.stream``) instead
    env: str | None = None  # environment ``env`` alone, in the flat layout (render, check)
    # The jobs that take this paddlegen's rendering although their spec is unchanged (None:
    # every job); the others keep the files an older paddlegen wrote (output/stamp.py).
    upgrade: Sequence[str] | None = ()
    validate: bool = False  # run_render: validate the manifests first; ManifestError if they fail
    fix: bool = False  # run_check: rewrite the output that differs
    # run_render, run_check with ``fix``: write although an environment of a job whose spec is
    # there goes (output/removals.py); else UnsafeMergeError, nothing written
    allow_removal: bool = False
    manifests: bool = True  # run_validate: the manifests the specs render to as well
    kubernetes_version: str | None = None  # the API version validated against (default: newest)
    kubeconform: str | None = None  # the kubeconform binary (default: $PADDLEGEN_KUBECONFORM, PATH)
    prefer_kubeconform: bool = True  # else a handful of specs validate faster in process
    schema_locations: Sequence[str] = ()  # kubeconform -schema-location templates, after ours
    ignore_missing_schemas: bool = False  # objects of a kind without a schema pass unchecked
    server: Server | None = None  # with validation: also a server-side apply dry-run there

    def __post_init__(self) -> None:
        if isinstance(self.specs, (str, Path)):  # one spec, not a string's characters
            object.__setattr__(self, "specs", (self.specs,))

    def command_line(self, specs: Sequence[str], command: str, env: str | None) -> str:
        """The `paddlegen command` (render, check) on ``specs`` (the arguments as given) that
        renders as this request does, for environment ``env``, quoted for a POSIX shell."""
        import shlex

        args = ["paddlegen", command, *specs, "-o", str(self.output)]
        args += ["--workload", self.workload] if self.workload else []
        args += ["--templates", self.templates] if self.templates else []
        args += [] if self.argocd else ["--no-argocd"]
        args += [arg for rule in self.ignore for arg in ("--ignore", rule)]
        args += ["--env", env] if env else []
        return shlex.join(args)


@dataclass(frozen=True)
class Result:
    """What ``run_render`` or ``run_check`` did: every spec rendered, and what was written,
    found different or printed."""

    rendered: list[Rendered]
    written: list[tuple[str, WriteReport]] = field(default_factory=list)  # per job
    drifts: list[tuple[str, Drift]] = field(default_factory=list)  # run_check: jobs that differ
    findings: list[Diagnostic] = field(default_factory=list)  # the manifests' warnings
    stream: str = ""  # with ``stdout``: every manifest in apply order
    fallbacks: list[str] = field(default_factory=list)  # with ``env``: specs rendered as base

    @property
    def warnings(self) -> list[Diagnostic]:
        """The specs' warnings (an error raises SpecError instead)."""
        return [w for r in self.rendered for w in r.warnings]

    def fallback_notes(self, env: str | None) -> list[str]:
        """A line per spec that has overlays but not ``env``, the environment asked for."""
        said = f"has no overlay '{env}': its base is rendered"
        return [f"paddlegen: {file} {said}" for file in self.fallbacks]

    def kept_notes(self, out_dir: str) -> list[str]:
        """A line per paddlegen version whose files jobs in ``out_dir`` keep (their specs
        did not change, and this paddlegen renders them differently), naming the jobs."""
        by_version: dict[str, list[str]] = {}
        for r in self.rendered:
            if r.kept:
                by_version.setdefault(r.kept, []).append(r.name)
        lines = []
        for version, names in sorted(by_version.items()):
            one = len(names) == 1
            jobs = f"{len(names)} job{'' if one else 's'} ({', '.join(sorted(names))})"
            lines.append(
                f"paddlegen: note: {jobs} in {out_dir} keep{'s' if one else ''} the files "
                f"paddlegen {version} wrote: "
                "their specs did not change, and this paddlegen renders them differently (under "
                "Argo CD a job whose objects change runs again); `paddlegen render --upgrade JOB` "
                "or `--upgrade-all` takes the new rendering"
            )
        return lines

    def write_notes(self, out_dir: str) -> list[str]:
        """What the reader of ``run_render``'s write of ``out_dir`` should know, a line each:
        the jobs that keep an older paddlegen's files, each job's Applications that a change
        of layout renames, its folder removed and the files kept, the counts, and the staging
        folders the write could not remove."""
        from paddlegen.output.writer import leftover_staging, stuck_message

        lines = self.kept_notes(out_dir)
        totals = {"written": 0, "unchanged": 0, "removed": 0}
        for name, report in self.written:
            lines += _job_notes(out_dir, name, report)
            for key in totals:
                totals[key] += len(getattr(report, key))
        jobs = len(self.rendered)
        lines.append(
            f"{jobs} job{'s' if jobs != 1 else ''} in {out_dir}: "
            + ", ".join(f"{n} {key}" for key, n in totals.items())
        )
        stuck = leftover_staging(Path(out_dir))  # after a write, which sweeps them all
        if stuck:
            lines.append(f"paddlegen: warning: {stuck_message(out_dir, stuck)}")
        return lines

    def up_to_date(self, out_dir: str) -> str:
        """``3 jobs in deploy: up to date``: ``run_check`` found no drift."""
        jobs = len(self.rendered)
        return f"{jobs} job{'s' if jobs != 1 else ''} in {out_dir}: up to date"

    def fix_summary(self, out_dir: str) -> str:
        """What ``run_check`` with ``fix`` did to ``out_dir``: the stale jobs rewritten, the
        leftover staging folders removed (those it could not, with their command), and how
        many files of the user's it left for them to move or fix."""
        from paddlegen.output.writer import leftover_staging, stuck_message

        stale = sum(found.fixable and not found.leftover for _, found in self.drifts)
        stuck = leftover_staging(Path(out_dir))
        # said of those it did remove: one it could not stays, named with its command
        left = {name for name, found in self.drifts if found.leftover} - set(stuck)
        theirs = sum(len(found.unknown) + len(found.custom) for _, found in self.drifts)
        return (
            f"paddlegen: rewrote {stale} stale job(s)"
            + (f", removed {len(left)} leftover staging folder(s)" if left else "")
            + (f"; {stuck_message(out_dir, stuck)}" if stuck else "")
            + (
                f"; {theirs} file(s) above are yours to move into custom/ or fix: "
                "--fix does not touch them"
                if theirs
                else ""
            )
        )

    def other_env_notes(self, out_dir: str | Path, env: str | None, command: str) -> list[str]:
        """A line per job folder rendered for another environment than ``env``, this
        ``command``'s (check or diff): compared without the --env it was written with, every
        file differs."""
        lines = []
        for name, found in self.drifts:
            written = found.env
            if written != env:
                made, give = (
                    (f"with --env {written}", f"--env {written}")
                    if written
                    else ("without --env", "no --env")
                )
                lines.append(
                    f"paddlegen: {Path(out_dir) / name} was rendered {made}; to compare it as "
                    f"written, give this {command} {give}"
                )
        return lines

    def mend_notes(self, request: Request, specs: Sequence[str]) -> list[str]:
        """How to mend the output ``run_check`` found stale, a line each (none when a render
        would not: the files that differ are the user's): the folders rendered for another
        environment, and the render that brings the output up to date, or the check that
        compares it as it was written; ``specs`` are the arguments as given."""
        if not any(found.fixable and not found.leftover for _, found in self.drifts):
            return []
        lines = self.other_env_notes(request.output, request.env, "check")
        written = {found.env for _, found in self.drifts if found.env != request.env}
        if not written:
            lines.append(
                "paddlegen: to bring the output up to date: "
                + request.command_line(specs, "render", request.env)
                + " (or this check with --fix)"
            )
        elif len(written) == 1:
            # A render (or --fix) with this --env would rewrite the folders in another layout:
            # the output is compared as it was written instead.
            (as_written,) = written
            lines.append(
                "paddlegen: to check the output as it was written: "
                + request.command_line(specs, "check", as_written)
            )
        return lines

    def refuse_drift(self) -> None:
        """StaleOutputError when ``run_check`` found drift (shown as it was found, to
        ``Events.drifted``)."""
        if self.drifts:
            jobs = f"{len(self.drifts)} of {len(self.rendered)} jobs differ"
            raise StaleOutputError(jobs, shown=True)


def _job_notes(out_dir: str, name: str, report: WriteReport) -> list[str]:
    """What writing job ``name`` did that its reader should know: the Applications its change
    of layout renames, its folder removed, the files of the user's kept."""
    import os

    from paddlegen.gitops.argocd import renamed_applications
    from paddlegen.output.layout import CUSTOM, is_custom, own_place

    lines = []
    renamed = renamed_applications(name, report)
    if renamed:
        before, after = (", ".join(names) for names in renamed)
        lines.append(
            f"paddlegen: warning: {name} changed layout: Argo CD Applications made without "
            f"--env go from {before} to {after}, and deleting {before} deletes its live "
            "objects (resources finalizer), stopping a running job; see "
            "docs/environments.md#environments-in-argo-cd"
        )
    gone = not (report.written or report.unchanged)  # the job's spec is gone
    if gone and report.removed:
        removed = os.path.join(out_dir, name)
        lines.append(f"paddlegen: removed {removed}: no spec renders it any more")
    place = own_place(os.path.join(out_dir, name, CUSTOM))
    for rel in report.kept:
        kept = os.path.join(out_dir, name, rel)  # `-o deploy/` must not show `deploy//x`
        if gone:
            lines.append(f"paddlegen: kept {kept} (not generated by paddlegen)")
        elif not is_custom(rel):  # custom/ is where a job's own files go: nothing to say
            lines.append(
                f"paddlegen: kept {kept} (not generated by paddlegen, and not deployed: "
                f"no kustomization lists it; {place})"
            )
    return lines


def run_render(request: Request, events: Events | None = None) -> Result:
    """``paddlegen render``: every spec validated (SpecError with every finding, and nothing
    rendered, when one has errors), rendered, and written to ``request.output`` (jobs already
    up to date skipped), or with ``stdout`` returned as one stream; with ``validate`` the
    manifests are validated first, and fail as a ManifestError, nothing written."""
    events = events or Events()
    paths, prune = _specs(request)
    if request.stdout or request.validate:
        rendered = plan(request, paths, events)
        fallbacks = _fallbacks(rendered, request.env)  # before anything is printed or written
        events.warnings([w for r in rendered for w in r.warnings])
        found = _validated(rendered, request, events) if request.validate else []
        if request.stdout:
            stream = manifest_stream(rendered)
            return Result(rendered, findings=found, stream=stream, fallbacks=fallbacks)
        # Loaded here: what writes the output folder is no part of a printed render's cost.
        from paddlegen.pipeline.write import write_rendered

        written = write_rendered(
            rendered, request.output, prune, events, request.jobs, request.allow_removal
        )
        return Result(rendered, written, findings=found, fallbacks=fallbacks)
    from paddlegen.pipeline.write import write_planned, writing

    out = Path(request.output)
    with writing(out, events):  # held while the plan reads the stamps: a second render waits
        rendered = plan(request, paths, events)
        fallbacks = _fallbacks(rendered, request.env)
        written = write_planned(rendered, out, prune, request.jobs, request.allow_removal)
    events.warnings([w for r in rendered for w in r.warnings])
    return Result(rendered, written, fallbacks=fallbacks)


def plan(request: Request, paths: Sequence[Path], events: Events | None = None) -> list[Rendered]:
    """What ``request`` would write, read by render, check and diff alike: each of ``paths``
    (the spec files it names) as its job folder's files in memory (``Rendered.files``), or
    reused when the folder in ``request.output`` is current (its stamp says so); nothing is
    written. With ``stdout`` or ``validate`` each job keeps its objects and positions."""
    objects = request.stdout or request.validate
    return render_specs(
        paths,
        request.workload,
        request.templates,
        argocd=request.argocd,
        objects=objects,
        # One environment's tree is planned in full: reuse would skip a job by its stamp
        # before the run knows which of its specs lack the environment.
        reuse=None if objects or request.env else request.output,
        jobs=request.jobs,
        ignore=request.ignore,
        events=events,
        output=None if request.stdout else request.output,
        stamped=not request.stdout,  # printed output is never stamped
        env=request.env,
        upgrade=request.upgrade,
    )


def _specs(request: Request) -> tuple[list[Path], bool]:
    """The spec files ``request`` names, and whether to prune the jobs whose spec is gone."""
    paths, whole_set = collect_specs(request.specs)
    return paths, whole_set if request.prune is None else request.prune


def _validated(rendered: list[Rendered], request: Request, events: Events) -> list[Diagnostic]:
    """The manifests' warnings; ManifestError with every finding when one is an error."""
    from paddlegen.validate.inputs import validate_rendered

    found, backend = validate_rendered(
        rendered,
        request.output,
        request.kubernetes_version,
        request.kubeconform,
        request.prefer_kubeconform,
        extra=_extra_schemas(request),
    )
    events.validated(backend)
    if request.server and not any(d.is_error for d in found):
        from paddlegen.validate.server import dry_run

        found += dry_run(rendered, request.server)
    if any(d.is_error for d in found):
        raise ManifestError("invalid manifests", found)
    events.warnings(found)  # the server's
    return found


def _extra_schemas(request: Request) -> ExtraSchemas:
    from paddlegen.validate.locations import ExtraSchemas

    return ExtraSchemas(tuple(request.schema_locations), request.ignore_missing_schemas)


def _fallbacks(rendered: list[Rendered], env: str | None) -> list[str]:
    """The spec files that have overlays but not ``env``: their base is rendered."""
    if not env:
        return []
    from paddlegen.output.layout import base_fallbacks

    names = base_fallbacks(env, {r.name: list(r.overlays) for r in rendered})
    return [r.file for r in rendered if r.name in names]


def run_check(request: Request, events: Events | None = None) -> Result:
    """``paddlegen check`` and ``diff``: how the output in ``request.output`` differs from what
    the specs render to (``Result.drifts``, empty when it is up to date); with ``fix`` the
    output that differs is rewritten, and the leftovers of an interrupted render removed. The
    queued specs are checked against a KueueSetup among ``request.specs``, else the
    repository's (gitops/kueue_fit); its errors are a SpecError."""
    from paddlegen.gitops import kueue_fit
    from paddlegen.pipeline.write import drift, write_rendered

    events = events or Events()
    specs, setups = kueue_fit.named_setups(request.specs)
    request = replace(request, specs=tuple(specs))
    paths, prune = _specs(request)
    rendered = plan(request, paths, events)
    fallbacks = _fallbacks(rendered, request.env)
    fit = kueue_fit.check_rendered(kueue_fit.setups_for(setups), rendered, request.workload)
    if any(d.is_error for d in fit):
        raise SpecError("invalid input", fit)
    events.warnings([w for r in rendered for w in r.warnings] + fit)
    drifts = drift(rendered, request.output, prune=prune)
    events.drifted(rendered, drifts)
    if not (request.fix and drifts):
        return Result(rendered, drifts=drifts, fallbacks=fallbacks)
    written = write_rendered(
        rendered, request.output, prune, events, allow_removal=request.allow_removal
    )
    return Result(rendered, written, drifts, fallbacks=fallbacks)


def run_merge_plan(request: Request, base: str = "HEAD", events: Events | None = None) -> MergePlan:
    """``paddlegen plan``: what merging the work tree into ``base`` (a git revision of the
    repository holding ``request.output``) does to each Argo CD Application, the output and
    specs committed there against what ``run_render`` would write now (the plan: nothing is
    written, no cluster asked)."""
    from paddlegen.gitops.committed import Committed
    from paddlegen.gitops.merge import merge_plan

    paths, prune = _specs(request)
    with Committed(request.output, base) as committed:  # a folder outside git fails first
        rendered = plan(request, paths, events)
        return merge_plan(committed, rendered, request.output, prune=prune, env=request.env)


def run_validate(request: Request) -> Validation:
    """``paddlegen validate``: the specs checked against the schema and the rules, with
    ``manifests`` the manifests they render to as well (in memory), rendered job directories
    among ``specs`` validated as manifests, and with ``server`` a dry-run there; every finding
    collected, none raised."""
    from paddlegen.gitops import kueue_fit
    from paddlegen.validate.inputs import validate_inputs

    found = validate_inputs(
        request.specs,
        manifests=request.manifests,
        workload=request.workload,
        kubernetes_version=request.kubernetes_version,
        kubeconform=request.kubeconform,
        ignore=request.ignore,
        prefer_binary=request.prefer_kubeconform,
        server=request.server,
        extra=_extra_schemas(request),
    )
    setups = kueue_fit.setups_for(found.setups)
    more = kueue_fit.check(setups, found.valid, request.workload)
    return replace(found, diagnostics=found.diagnostics + more, setups=tuple(setups))
