"""Build -> render -> plan: valid specs to what each job's folder would hold, nothing written."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from paddlegen.errors import (
    Diagnostic,
    InputError,
    InvalidValueError,
    OutputError,
    SpecError,
    TemplateError,
)
from paddlegen.events import Events
from paddlegen.output import stamp
from paddlegen.output.layout import CUSTOM, Plan, has_custom, plan_job, plan_overlays, stream
from paddlegen.output.pool import map_ordered
from paddlegen.output.stamp import Inputs, Reused, with_stamp
from paddlegen.pipeline.load import load_valid, require_valid
from paddlegen.render.engine import Manifest, render_job
from paddlegen.spec.loader import Document, read_spec_bytes
from paddlegen.spec.model import Job, build_job
from paddlegen.spec.record import record
from paddlegen.workloads import workload_of


@record
class Rendered:
    """One spec through the pipeline: its job directory's files, before anything touches disk.

    ``reused`` says the directory on disk is already what the spec renders to (nothing was
    rendered; ``plan`` is empty). ``files`` adds the stamp to ``plan``: what a write puts in
    the job folder. ``doc``, ``job``, ``manifests`` and ``environments`` are the
    objects and positions that ``--stdout`` and validation need; results that cross a process
    boundary leave them out (``None`` and empty), which keeps them small. Rendered for one
    environment (``--env``), they are that environment's, in the flat layout, and
    ``environments`` is empty; ``overlays`` always names the spec's environments.
    """

    file: str
    name: str
    plan: Plan
    warnings: list[Diagnostic]
    digest: str = ""  # the input digest its stamp records (see output/stamp.py); "" writes none
    reused: Reused | None = None
    doc: Document | None = None
    job: Job | None = None
    manifests: list[Manifest] = field(default_factory=list)  # of the base spec
    environments: dict[str, list[Manifest]] = field(default_factory=dict)  # merged overlays
    custom: bool = False  # the plan lists the job folder's own Component (output/layout.py)
    overlays: tuple[str, ...] = ()  # the spec's environments, sorted
    env: str | None = None  # the environment rendered alone (--env), which its stamp records
    source: str = ""  # the digest of what of the input is the user's (output/stamp.py)
    # The paddlegen version whose files the job folder keeps: this one renders the unchanged
    # spec differently, and the user did not ask for that (``upgrade``). Reused, then.
    kept: str | None = None

    def files(self, out: Path) -> dict[str, str]:
        """The job folder's files in ``out`` (relative path -> text), its stamp among them
        when it has an input digest; empty for a reused job (what is on disk is current)."""
        return with_stamp(self, out / self.name) if not self.reused else {}


def render_document(
    doc: Document,
    workload: str | None = None,
    templates: str | None = None,
    *,
    ignore: Iterable[str] = (),
    argocd: bool = True,
    digest: str = "",
    output: str | Path | None = None,
) -> Rendered:
    """A loaded spec validated (SpecError carrying every finding when it has errors, see
    ``load.require_valid``), then rendered in memory as ``render_valid`` renders it."""
    warnings = require_valid(doc, workload, ignore)
    return render_valid(
        doc, workload, templates, warnings, argocd=argocd, digest=digest, output=output
    )


def render_valid(
    doc: Document,
    workload: str | None = None,
    templates: str | None = None,
    warnings: Iterable[Diagnostic] = (),
    *,
    argocd: bool = True,
    digest: str = "",
    output: str | Path | None = None,
    env: str | None = None,
    source: str = "",
) -> Rendered:
    """A loaded spec already validated (its ``warnings`` found) rendered in memory, objects
    and positions kept. With ``output`` (the folder the job folder is planned for), a
    `custom/` Component found in the job folder there is listed in its kustomization. With
    ``env``, environment ``env`` alone in the flat layout (the spec merged with its overlay;
    the base when the spec has overlays but not that one)."""
    from paddlegen.spec.overlays import base_document, env_document

    job, manifests = _render_data(base_document(doc).data, workload, templates, argocd)
    overlays = tuple(sorted(doc.data.get("overlays", {})))
    env_jobs = {
        name: _render_data(env_document(doc, name).data, workload, templates, argocd)
        for name in overlays
        if env is None or name == env
    }
    if env is not None and env in env_jobs:
        doc = env_document(doc, env)
        job, manifests = env_jobs.pop(env)
    environments = {name: env_manifests for name, (_, env_manifests) in env_jobs.items()}
    custom = output is not None and has_custom(Path(output) / job.name)
    plan = (
        plan_overlays(
            job,
            manifests,
            environments,
            {env: j.namespace for env, (j, _) in env_jobs.items()},
            custom,
        )
        if environments
        else plan_job(job, manifests, CUSTOM if custom else None)
    )
    return Rendered(
        doc.file,
        job.name,
        plan,
        list(warnings),
        digest,
        None,
        doc,
        job,
        manifests,
        environments,
        custom,
        overlays,
        env,
        source,
    )


def _render_data(
    data: dict[str, Any], workload: str | None, templates: str | None, argocd: bool
) -> tuple[Job, list[Manifest]]:
    job = build_job(data, workload_of(data, workload))
    manifests = render_job(job, templates)
    if argocd:
        from paddlegen.render.syncwaves import annotate

        manifests = annotate(job.name, job.workload, manifests)
    return job, manifests


def render_specs(
    paths: Sequence[str | Path],
    workload: str | None = None,
    templates: str | None = None,
    *,
    argocd: bool = True,
    objects: bool = True,
    reuse: str | Path | None = None,
    jobs: int = 1,
    ignore: Iterable[str] = (),
    events: Events | None = None,
    output: str | Path | None = None,
    stamped: bool = True,
    env: str | None = None,
    upgrade: Collection[str] | None = (),
) -> list[Rendered]:
    """The plan: every spec validated and rendered to its job's files in memory (nothing is
    written); all errors reported together, nothing rendered twice.

    With ``objects`` (the default) each result keeps its objects and positions, and the work
    stays in this process. Without, the specs are rendered on up to ``jobs`` processes, which
    return their plans; with ``reuse`` (the output folder), a spec whose job directory there
    carries a matching stamp and untouched files is not rendered again (``Rendered.reused``):
    the stamps are read, nothing else is. A SpecError carries every spec's findings, its
    message how many specs have errors (``specs_with_errors``). ``ignore``
    names rules whose findings are silenced in every spec (see ``validate_document``).
    ``output`` is the folder the job folders are planned for (see ``render_valid``).
    Without ``stamped`` (output to print) the results carry no input digest (no stamp).
    With ``env``, each job is environment ``env`` of its spec alone (see ``render_valid``).
    A job whose folder in ``output`` an older paddlegen rendered from the spec as it is now
    keeps that folder when this paddlegen renders it differently (``Rendered.kept``), unless
    ``upgrade`` names it (None: every job takes this paddlegen's rendering).
    """
    specs = [Path(p) for p in paths]
    inputs = Inputs.of(workload, templates, argocd, ignore, stamped=stamped or bool(reuse), env=env)
    raws: dict[Path, bytes] = {}  # specs read while looking for reusable jobs: not read twice
    stamps = stamp.read_stamps(Path(reuse)) if reuse else None  # read once, used twice
    kept_from = Path(output) if output and stamped else None
    if kept_from and stamps is None:
        stamps = stamp.read_stamps(kept_from)
    found = {
        path: Rendered(str(path), name, {}, reused.warnings, digest, reused)
        for path, (name, digest, reused) in (
            stamp.reusable(specs, Path(reuse), stamps, inputs, raws) if reuse and stamps else {}
        ).items()
    }
    todo = [path for path in specs if path not in found]
    keep = (
        stamp.keepable(todo, kept_from, stamps, inputs, raws, upgrade)
        if kept_from and stamps
        else {}
    )
    work = [
        (path, inputs, raws.get(path), objects, Path(output) if output else None) for path in todo
    ]
    results = dict(
        zip(
            todo,
            map_ordered(
                _render_one,
                work,
                1 if objects else jobs,
                warm=lambda: _warm(templates),
                done=events.progress if events else None,
            ),
            strict=True,
        )
    )
    for path, old in keep.items():
        r = results[path]
        if isinstance(r, Rendered) and r.name == old.name and not old.unchanged(r.plan):
            results[path] = replace(r, plan={}, reused=old.reused, kept=old.version)
    outcomes = [found.get(path) or results[path] for path in specs]
    try:
        _raise_first(list(results.values()))
        rendered = [r for r in outcomes if isinstance(r, Rendered)]  # all of them, by now
        refuse_same_name(rendered, Path(output) if output else None)
        refuse_unknown_upgrades(upgrade or (), rendered)
        if output and stamped:
            same = reuse is not None and Path(reuse) == Path(output)
            refuse_takeover(rendered, Path(output), stamps if same else None)
    except SpecError as exc:
        raise SpecError(specs_with_errors(exc.diagnostics, len(specs)), exc.diagnostics) from None
    return rendered


def manifest_stream(rendered: list[Rendered], env: str | None = None) -> str:
    """The manifests of every job (of environment ``env`` where a job has it) as one stream."""
    return stream(
        [
            m
            for r in rendered
            for m in (r.environments.get(env, r.manifests) if env else r.manifests)
        ]
    )


def specs_with_errors(diagnostics: Sequence[Diagnostic], total: int) -> str:
    """How many of ``total`` specs the errors among ``diagnostics`` are in, as a sentence:
    ``1 of 12 specs has errors``."""
    bad = len({d.file for d in diagnostics if d.is_error})
    specs = "spec" if total == 1 else "specs"
    return f"{bad} of {total} {specs} {'has' if bad == 1 else 'have'} errors"


def _render_one(
    work: tuple[Path, Inputs, bytes | None, bool, Path | None],
) -> Rendered | Exception:
    """One spec from file to plan; errors are returned, as they cross a process boundary."""
    path, inputs, raw, objects, output = work
    try:
        raw = read_spec_bytes(path) if raw is None else raw
        doc, warnings = load_valid(path, inputs.workload, raw, inputs.ignore)
        r = render_valid(
            doc,
            inputs.workload,
            inputs.templates,
            warnings,
            argocd=inputs.argocd,
            digest=inputs.digest(raw),
            output=output,
            env=inputs.env,
            source=inputs.source(raw),
        )
        if not objects:
            r = Rendered(
                r.file,
                r.name,
                r.plan,
                r.warnings,
                r.digest,
                custom=r.custom,
                overlays=r.overlays,
                env=r.env,
                source=r.source,
            )
    except (InputError, SpecError, OutputError, TemplateError) as exc:
        return exc
    return r


def _raise_first(results: list[Rendered | Exception]) -> None:
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


def _warm(templates: str | None) -> None:
    """Load what every spec needs once, before worker processes fork from this one."""
    from paddlegen.render.engine import warm_templates
    from paddlegen.spec.schema import warm_validator

    warm_templates(templates)
    warm_validator()


def refuse_unknown_upgrades(upgrade: Collection[str], rendered: Sequence[Rendered]) -> None:
    """A job to upgrade that no spec names is a typo: nothing would take the new rendering."""
    names = sorted(r.name for r in rendered)
    for name in sorted(set(upgrade) - set(names)):
        from paddlegen.spec.schema import did_you_mean  # only on this error: jsonschema's module

        close = did_you_mean(name, names)
        raise InvalidValueError(
            f"--upgrade {name}: no spec given renders a job of that name"
            + (f"; {close}" if close else "")
        )


def refuse_same_name(rendered: Sequence[Rendered], out: Path | None = None) -> None:
    """An error at each spec whose job name another has; with the output folder ``out``, not
    at the spec its job folder's stamp names (the one already there), but at the others."""

    def owner(name: str) -> str | None:
        return stamp.stamped_spec(out / name) if out is not None else None

    found = same_name_diagnostics([(r.file, r.name, 0, 0) for r in rendered], owner)
    if found:  # only now is each name's position looked up: a render keeps no documents
        from paddlegen.output.owner import name_position

        refused = {d.file for d in found}
        found = same_name_diagnostics(
            [
                (r.file, r.name, *(name_position(r.file) if r.file in refused else (0, 0)))
                for r in rendered
            ],
            owner,
        )
        raise SpecError("specs share a job name", found)


def refuse_takeover(
    rendered: Sequence[Rendered], out: Path, stamps: Mapping[str, Mapping[str, Any]] | None
) -> None:
    """A spec whose job folder in ``out`` is another spec file's (output/owner.py) is an error.
    A reused job's stamp names its spec already (stamp.verify); ``stamps``: those in ``out``,
    when they were read."""
    from paddlegen.output.owner import takeover_diagnostics  # a folder's owner: not --stdout's

    fresh = [(r.file, r.name) for r in rendered if not r.reused]
    found = takeover_diagnostics(fresh, out, stamps)
    if found:
        raise SpecError("a spec would take another's job over", found)


def same_name_diagnostics(
    jobs: Sequence[tuple[str, str, int, int]], owner: Callable[[str], str | None] = lambda _: None
) -> list[Diagnostic]:
    """An error for each spec whose job name (metadata.name) another has: both would render
    into the same job directory. ``jobs``: spec file, job name, line and column of the name (0
    when unknown). Of the specs of one name, the one ``owner(name)`` gives (the spec file its
    job folder's stamp names, absolute) has none, the newcomers have: else the first has none."""
    by_name: dict[str, list[str]] = {}
    for file, name, _, _ in jobs:
        by_name.setdefault(name, []).append(file)
    kept: dict[str, str] = {}
    for name, files in by_name.items():
        stamped = owner(name) if len(files) > 1 else None
        mine = [f for f in files if stamped and stamp.resolved(f) == stamped]
        kept[name] = (mine or files)[0]
    clashes = [(file, name, line, col) for file, name, line, col in jobs if file != kept[name]]
    if not clashes:
        return []
    from paddlegen.output.owner import JOB_NAME  # the rule's module: only when names clash

    return [
        Diagnostic(
            file,
            line,
            col,
            "error",
            "$.metadata.name",
            f"job '{name}' is also the name of {kept[name]}: both would render into the same "
            "directory",
            JOB_NAME.id,
        )
        for file, name, line, col in clashes
    ]
