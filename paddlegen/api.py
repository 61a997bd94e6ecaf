"""The one pipeline: load -> check -> build -> render -> plan -> write | drift | validate.

For one spec or ten thousand, with one result type (``Rendered``) and one write path
(``write_rendered``, and ``render_into`` that renders and writes under one lock). The library never
prints; the ``cli`` package does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paddlegen.errors import (
    Diagnostic,
    InputError,
    OutputError,
    PaddlegenError,
    SpecError,
    TemplateError,
)
from paddlegen.output import stamp
from paddlegen.output.drift import Drift, drift_of, user_files
from paddlegen.output.layout import (
    CUSTOM,
    Plan,
    generated_jobs,
    has_custom,
    is_generated,
    plan_job,
    plan_overlays,
    stream,
)
from paddlegen.output.pool import map_ordered
from paddlegen.output.stamp import Inputs, Reused, with_stamp, without_stamp
from paddlegen.output.writer import (
    Staged,
    WriteReport,
    commit,
    discard,
    leftover_staging,
    output_lock,
    remove_job,
    stage_job,
    sweep_staging,
    write_job,
)
from paddlegen.render.engine import Manifest, render_job
from paddlegen.spec.loader import Document, parse_spec, read_spec_bytes
from paddlegen.spec.model import Job, build_job

if TYPE_CHECKING:
    from paddlegen.validate.target import Server


class Events(Protocol):
    """What a long call tells its caller as it goes (the library itself never prints)."""

    def progress(self, done: int, total: int) -> None:
        """``done`` of the ``total`` specs that needed rendering are finished."""

    def waiting_for_lock(self) -> None:
        """Another paddlegen holds the output folder; this call waits for it."""


@dataclass(frozen=True)
class Rendered:
    """One spec through the pipeline: its job directory's files, before anything touches disk.

    ``reused`` says the directory on disk is already what the spec renders to (nothing was
    rendered; ``plan`` is empty); ``staged`` holds its new tree, built beside the old one and
    waiting to be swapped in. ``doc``, ``job``, ``manifests`` and ``environments`` are the
    objects and positions that ``--stdout`` and validation need; results that cross a process
    boundary leave them out (``None`` and empty), which keeps them small.
    """

    file: str
    name: str
    plan: Plan
    warnings: list[Diagnostic]
    digest: str = ""  # the input digest its stamp records (see output/stamp.py); "" writes none
    reused: Reused | None = None
    staged: Staged | None = None
    doc: Document | None = None
    job: Job | None = None
    manifests: list[Manifest] = field(default_factory=list)  # of the base spec
    environments: dict[str, list[Manifest]] = field(default_factory=dict)  # merged overlays
    custom: bool = False  # the plan lists the job folder's own Component (output/layout.py)


def validate_document(
    doc: Document, workload: str | None = None, ignore: Iterable[str] = ()
) -> list[Diagnostic]:
    """Every finding for a loaded spec: the schema first, then (on a schema-valid spec) checks.

    The checks' findings that the spec's ``ignore`` entries or the rules in ``ignore`` silence
    are left out (a rule that is unknown or cannot be silenced raises InvalidValueError); an
    entry that silences nothing is a warning.
    """
    from paddlegen.rules import semantic_diagnostics
    from paddlegen.rules.ignores import Silencer, run_rules
    from paddlegen.spec.schema import schema_diagnostics

    rules = run_rules(ignore)
    found = schema_diagnostics(doc)
    checked = not found  # the checks assume the shapes the schema guarantees
    silencer = Silencer(doc, rules) if checked else None
    if silencer is not None:
        found = sorted(silencer.refused() + silencer.keep(semantic_diagnostics(doc, workload)))
    # Each environment is a spec of its own: merged, it must pass everything the base does.
    # Its schema findings come in the same round as the base's, not after those are fixed.
    from paddlegen.spec.overlays import env_document, overlay_path

    overlays = doc.data.get("overlays") if isinstance(doc.data, dict) else None
    for env, overlay in overlays.items() if isinstance(overlays, dict) else ():
        if not isinstance(overlay, dict) or not isinstance(doc.data.get("spec", {}), dict):
            continue  # the schema finding on it says why: there is nothing to merge
        merged = env_document(doc, env)
        more = schema_diagnostics(merged)
        if not more and silencer is not None:
            more = semantic_diagnostics(merged, workload)
        new = [
            dataclasses.replace(d, path=overlay_path(doc, env, d.path))
            for d in more
            if d not in found  # a base finding shows once, not once per environment
        ]
        found += silencer.keep(new) if silencer is not None else new
    # Every check ran on the base and each environment: an entry that silenced nothing is stale.
    return sorted(found + (silencer.unused() if silencer is not None else []))


def load_valid(
    path: str | Path,
    workload: str | None = None,
    raw: bytes | None = None,
    ignore: Iterable[str] = (),
) -> tuple[Document, list[Diagnostic]]:
    """Load and validate a spec; raise SpecError carrying every error, return the warnings."""
    doc = parse_spec(read_spec_bytes(path) if raw is None else raw, str(path))
    found = validate_document(doc, workload, ignore)
    errors = [d for d in found if d.is_error]
    if errors:
        raise SpecError(f"{doc.file}: invalid spec", found)
    return doc, found


SPEC_SUFFIXES = (".yaml", ".yml")


def collect_specs(inputs: Iterable[str | Path]) -> tuple[list[Path], bool]:
    """Spec files named by ``inputs`` (files, folders searched recursively, or globs).

    Also says whether a folder or glob was given: only then does the caller know the whole
    set of jobs, and may prune the output of jobs whose spec is gone.
    """
    found: list[Path] = []
    whole_set = False
    for item in map(str, inputs):
        path = Path(item)
        if path.is_dir():
            whole_set = True
            # Generated output below the folder (deploy/ inside jobs/) is not a spec.
            found.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.suffix in SPEC_SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
                and not is_generated(p)
            )
        elif not path.exists() and any(c in item for c in "*?["):
            whole_set = True
            matches = sorted(p for p in Path().glob(item) if p.is_file())
            if not matches:
                raise InputError(f"{item}: no spec matches")
            found.extend(matches)
        else:
            found.append(path)
    return list(dict.fromkeys(found)), whole_set


def render_document(
    doc: Document,
    workload: str | None = None,
    templates: str | None = None,
    warnings: Iterable[Diagnostic] = (),
    *,
    argocd: bool = True,
    digest: str = "",
    output: str | Path | None = None,
) -> Rendered:
    """A loaded, valid spec rendered in memory, objects and positions kept. With ``output``
    (the folder the job folder is planned for), a `custom/` Component found in the job folder
    there is listed in its kustomization."""
    from paddlegen.spec.overlays import base_document, env_document

    job, manifests = _render_data(base_document(doc).data, workload, templates, argocd)
    env_jobs = {
        env: _render_data(env_document(doc, env).data, workload, templates, argocd)
        for env in sorted(doc.data.get("overlays", {}))
    }
    environments = {env: env_manifests for env, (_, env_manifests) in env_jobs.items()}
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
        None,
        doc,
        job,
        manifests,
        environments,
        custom,
    )


def _render_data(
    data: dict, workload: str | None, templates: str | None, argocd: bool
) -> tuple[Job, list[Manifest]]:
    job = build_job(data, workload)
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
    stage_in: str | Path | None = None,
    ignore: Iterable[str] = (),
    events: Events | None = None,
    output: str | Path | None = None,
    stamped: bool = True,
) -> list[Rendered]:
    """Every spec validated and rendered; all errors reported together, nothing rendered twice.

    With ``objects`` (the default) each result keeps its objects and positions, and the work
    stays in this process. Without, the specs are rendered on up to ``jobs`` processes;
    with ``reuse`` (the output folder), a spec whose job directory there carries a matching
    stamp and untouched files is not rendered again (``Rendered.reused``); with ``stage_in``
    (the output folder, held under ``output_lock``), each worker also builds its job's new tree
    beside the old one, so the files are written in parallel with the rendering. On any error
    every staged tree is discarded before the error is raised: a SpecError carrying every
    spec's findings, its message how many specs have errors (``specs_with_errors``). ``ignore``
    names rules whose findings are silenced in every spec (see ``validate_document``).
    ``output`` is the folder the job folders are planned for (see ``render_document``).
    Without ``stamped`` (output to print) the results carry no input digest (no stamp).
    """
    specs = [Path(p) for p in paths]
    inputs = Inputs.of(workload, templates, argocd, ignore, stamped=stamped or bool(reuse))
    raws: dict[Path, bytes] = {}  # specs read while looking for reusable jobs: not read twice
    found = {
        path: Rendered(str(path), name, {}, reused.warnings, digest, reused)
        for path, (name, digest, reused) in (
            stamp.reusable(specs, Path(reuse), inputs, raws) if reuse else {}
        ).items()
    }
    todo = [path for path in specs if path not in found]
    work = [
        (
            path,
            inputs,
            Path(stage_in) if stage_in else None,
            raws.get(path),
            objects,
            Path(output) if output else None,
        )
        for path in todo
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
    outcomes = [found.get(path) or results[path] for path in specs]
    try:
        _raise_first(list(results.values()))
        rendered = [r for r in outcomes if isinstance(r, Rendered)]  # all of them, by now
        refuse_same_name(rendered)
    except SpecError as exc:
        _discard_staged(outcomes)
        raise SpecError(specs_with_errors(exc.diagnostics, len(specs)), exc.diagnostics) from None
    except PaddlegenError:
        _discard_staged(outcomes)
        raise
    return rendered


def specs_with_errors(diagnostics: Sequence[Diagnostic], total: int) -> str:
    """How many of ``total`` specs the errors among ``diagnostics`` are in, as a sentence:
    ``1 of 12 specs has errors``."""
    bad = len({d.file for d in diagnostics if d.is_error})
    specs = "spec" if total == 1 else "specs"
    return f"{bad} of {total} {specs} {'has' if bad == 1 else 'have'} errors"


def _render_one(
    work: tuple[Path, Inputs, Path | None, bytes | None, bool, Path | None],
) -> Rendered | Exception:
    """One spec from file to plan (and staged tree); errors are returned, as they cross a
    process boundary."""
    path, inputs, stage_in, raw, objects, output = work
    try:
        raw = read_spec_bytes(path) if raw is None else raw
        doc, warnings = load_valid(path, inputs.workload, raw, inputs.ignore)
        r = render_document(
            doc,
            inputs.workload,
            inputs.templates,
            warnings,
            argocd=inputs.argocd,
            digest=inputs.digest(raw),
            output=output,
        )
        if not objects:
            r = Rendered(r.file, r.name, r.plan, r.warnings, r.digest, custom=r.custom)
        if stage_in is not None:
            staged = stage_job(stage_in, r.name, with_stamp(r, stage_in / r.name))
            r = dataclasses.replace(r, staged=staged)
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


def _discard_staged(rendered: Sequence[Rendered | Exception]) -> None:
    for r in rendered:
        if isinstance(r, Rendered) and r.staged is not None:
            discard(r.staged)


def _warm(templates: str | None) -> None:
    """Load what every spec needs once, before worker processes fork from this one."""
    from paddlegen.render.engine import warm_templates
    from paddlegen.spec.schema import warm_validator

    warm_templates(templates)
    warm_validator()


def refuse_same_name(rendered: Sequence[Rendered]) -> None:
    found = same_name_diagnostics([(r.file, r.name, 0, 0) for r in rendered])
    if found:
        raise SpecError("specs share a job name", found)


def same_name_diagnostics(jobs: Sequence[tuple[str, str, int, int]]) -> list[Diagnostic]:
    """An error for each spec whose job name (metadata.name) an earlier one already has: both
    would render into the same job directory. ``jobs``: spec file, job name, line and column
    of the name (0 when unknown)."""
    seen: dict[str, str] = {}
    found = []
    for file, name, line, col in jobs:
        if name in seen:
            message = (
                f"job '{name}' is also the name of {seen[name]}: both would render into the "
                "same directory"
            )
            found.append(
                Diagnostic(file, line, col, "error", "$.metadata.name", message, "job-name")
            )
        seen.setdefault(name, file)
    return found


def render_into(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    workload: str | None = None,
    templates: str | None = None,
    *,
    argocd: bool = True,
    jobs: int = 1,
    prune: bool = False,
    ignore: Iterable[str] = (),
    events: Events | None = None,
) -> tuple[list[Rendered], list[tuple[str, WriteReport]]]:
    """``paddlegen render``: unchanged jobs skipped, the rest rendered and staged on up to
    ``jobs`` processes, then swapped in, in order, all under the output lock."""
    out = Path(out_dir)
    with _writing(out, events):  # held while workers stage: a second render waits
        rendered = render_specs(
            paths,
            workload,
            templates,
            argocd=argocd,
            objects=False,
            reuse=out,
            jobs=jobs,
            stage_in=out,
            ignore=ignore,
            events=events,
            output=out,
        )
        return rendered, _write_all(rendered, out, prune)


def write_rendered(
    rendered: Sequence[Rendered],
    out_dir: str | Path,
    prune: bool = False,
    events: Events | None = None,
) -> list[tuple[str, WriteReport]]:
    """Write every job (with its stamp), and remove the generated jobs ``orphans`` names (with
    ``prune``, the whole set of specs was given: every job not rendered)."""
    out = Path(out_dir)
    with _writing(out, events):
        return _write_all(rendered, out, prune)


@contextlib.contextmanager
def _writing(out: Path, events: Events | None = None) -> Iterator[None]:
    """The output lock, held for a whole write. However the write ends early (an error,
    Ctrl-C, SIGTERM), jobs already swapped in stay and nothing else it made is left: the
    staging directories are swept, and a folder this call had to create is removed again."""
    created = not os.path.lexists(out)
    try:
        wait = events.waiting_for_lock if events else None
        with output_lock(out, on_wait=wait):  # a second render waits; no interleaved swaps
            try:
                yield
            except BaseException:
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


def _write_all(
    rendered: Sequence[Rendered], out: Path, prune: bool
) -> list[tuple[str, WriteReport]]:
    """Swap every job in, in order (a staged tree, else its plan written now); if one fails,
    ``_writing`` sweeps the rest, not the next render."""
    reports = []
    for r in rendered:
        if r.reused:
            reports.append((r.name, r.reused.report()))
        else:
            written = (
                commit(r.staged)
                if r.staged
                else write_job(out, r.name, with_stamp(r, out / r.name))
            )
            reports.append((r.name, without_stamp(written)))
    reports += [
        (name, without_stamp(remove_job(out, name))) for name in orphans(rendered, out, prune)
    ]
    return reports


def orphans(rendered: Sequence[Rendered], out: Path, whole_set: bool = True) -> list[str]:
    """Generated job directories in ``out`` that no rendered spec owns any more: with the
    ``whole_set`` of specs, every other one; otherwise those whose stamp names a spec that is
    gone or is among ``rendered`` (it names another job now). Others may be a spec's that was
    not given."""
    names = {r.name for r in rendered}
    given = {os.path.abspath(r.file) for r in rendered}
    return [
        name
        for name in generated_jobs(out)
        if name not in names and (whole_set or _spec_left(out / name, given))
    ]


def _spec_left(job_dir: Path, given: set[str]) -> bool:
    spec = stamp.stamped_spec(job_dir)
    return spec is not None and (spec in given or not os.path.exists(spec))


def drift(
    rendered: Sequence[Rendered], out_dir: str | Path, prune: bool = False
) -> list[tuple[str, Drift]]:
    """How the output on disk differs from ``rendered`` (nothing is written), staging
    directories left by an interrupted render included (named as they are, ``leftover``), and
    in every rendered job's folder, reused or not, the files of the user's nothing deploys."""
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
    return [(name, d) for name, d in found if d]


def manifest_stream(rendered: list[Rendered], env: str | None = None) -> str:
    """The manifests of every job (of environment ``env`` where a job has it) as one stream."""
    return stream(
        [
            m
            for r in rendered
            for m in (r.environments.get(env, r.manifests) if env else r.manifests)
        ]
    )


def manifest_files(rendered: list[Rendered], out_dir: str | Path) -> list[tuple[str, str]]:
    """``(path, text)`` of every manifest as it is (or would be) written under ``out_dir``."""
    return [(name, m.text()) for r in rendered for name, m in _named_manifests(r, out_dir)]


def _named_manifests(r: Rendered, out_dir: str | Path) -> list[tuple[str, Manifest]]:
    """Each manifest of a job, base and environments, named by the file of the plan that
    holds it: `base/<file>` beside overlays; an environment's object by its patch file (the
    object validated is the merged one), or by its own file when only the environment has it.
    An environment's object equal to the base's is the base's finding: left out."""
    job = Path(out_dir) / r.name
    base_dir = "base/" if r.environments else ""
    pairs = [(str(job / f"{base_dir}{m.filename}"), m) for m in r.manifests]
    for env, manifests in r.environments.items():
        for m in manifests:
            for rel in (f"overlays/{env}/patch-{m.filename}", f"overlays/{env}/{m.filename}"):
                if rel in r.plan:
                    pairs.append((str(job / rel), m))
                    break
    return pairs


def validate_rendered(
    rendered: list[Rendered],
    out_dir: str | Path,
    kubernetes_version: str | None = None,
    kubeconform: str | None = None,
    prefer_binary: bool = True,
    trees: Sequence[Path] = (),
) -> tuple[list[Diagnostic], str]:
    """Validate every manifest (plus rendered ``trees`` on disk) in one kubeconform process.

    Findings in rendered manifests carry the spec position their field came from.
    """
    from paddlegen.validate.provenance import field_tokens, spec_origin

    files = manifest_files(rendered, out_dir)
    found, used = validate_files(files, kubernetes_version, kubeconform, prefer_binary, trees)
    by_file = {
        name: (r.doc, m.obj)
        for r in rendered
        if r.doc is not None  # results without objects have no manifests to map either
        for name, m in _named_manifests(r, out_dir)
    }
    mapped = []
    for d in found:
        if d.file in by_file:
            doc, obj = by_file[d.file]
            d = dataclasses.replace(d, origin=spec_origin(doc, obj, field_tokens(d.path)))
        mapped.append(d)
    return mapped, used


def validate_files(
    files: list[tuple[str, str]],
    kubernetes_version: str | None = None,
    kubeconform: str | None = None,
    prefer_binary: bool = True,
    trees: Sequence[Path] = (),
) -> tuple[list[Diagnostic], str]:
    """Validate ``(name, yaml text)`` manifests and rendered ``trees``, with kubeconform or
    else in process."""
    from paddlegen.validate import k8s_schemas as k8sschemas
    from paddlegen.validate.manifests import validate_manifests

    return validate_manifests(
        files,
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION,
        kubeconform,
        prefer_binary,
        trees=trees,
    )


@dataclass(frozen=True)
class Validation:
    """What ``validate_inputs`` found, and in how much."""

    diagnostics: list[Diagnostic]
    specs: int  # spec files read
    trees: int  # rendered job directories read
    backend: str | None  # "kubeconform" or "in-process"; None when no manifest was checked
    files: tuple[str, ...] = ()  # the spec files read, as named


def validate_inputs(
    items: Iterable[str | Path],
    *,
    manifests: bool = False,
    workload: str | None = None,
    kubernetes_version: str | None = None,
    kubeconform: str | None = None,
    ignore: Iterable[str] = (),
    prefer_binary: bool = True,
    server: Server | None = None,
) -> Validation:
    """``paddlegen validate``: spec files and folders of them checked against the schema and
    the rules (with ``manifests``, the manifests they render to as well, in memory), and
    rendered job directories validated as manifests; every finding collected. ``ignore``
    silences rules in every spec, as for ``render_specs``. With ``server``, the specs'
    objects also go to that API server as a server-side apply dry-run."""
    trees: list[Path] = []
    spec_inputs = []
    for item in items:
        tree = rendered_trees(item)
        if tree is None:
            spec_inputs.append(item)
        else:
            trees.extend(tree)
    paths = collect_specs(spec_inputs)[0] if spec_inputs else []
    found: list[Diagnostic] = []
    valid = []
    for spec in paths:
        try:
            doc, warnings = load_valid(spec, workload, ignore=ignore)
            found.extend(warnings)
            valid.append((doc, warnings))
        except SpecError as exc:
            found.extend(exc.diagnostics)
    names = [(doc, doc.where(("metadata", "name"))) for doc, _ in valid]
    found += same_name_diagnostics(
        [(doc.file, doc.data["metadata"]["name"], at.line, at.col) for doc, at in names]
    )
    backend = None
    rendered = (
        [render_document(doc, workload, warnings=w) for doc, w in valid]
        if manifests or server
        else []
    )
    if (manifests and valid) or trees:
        # Trees are what kubeconform reads best (in place); a handful of specs is faster in
        # process than a kubeconform start.
        more, backend = validate_rendered(
            rendered if manifests else [],
            "",
            kubernetes_version,
            kubeconform,
            prefer_binary or bool(trees),
            trees,
        )
        found.extend(more)
    if server and rendered and not any(d.is_error for d in found):
        from paddlegen.validate.server import dry_run

        found.extend(dry_run(rendered, server))
    return Validation(found, len(paths), len(trees), backend, tuple(map(str, paths)))


def rendered_trees(path: str | Path) -> list[Path] | None:
    """The job directories of a rendered tree (a job directory or a folder of them), else None."""
    from paddlegen.output.layout import KUSTOMIZATION, is_generated

    root = Path(path)
    if not root.is_dir():
        return None
    if is_generated(root / KUSTOMIZATION) or is_generated(root / "base" / KUSTOMIZATION):
        return [root]
    return [root / name for name in generated_jobs(root)] or None
