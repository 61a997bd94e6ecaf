"""The pipeline: load -> check -> build -> render -> plan -> write. The library never prints."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paddlegen.errors import (
    Diagnostic,
    InputError,
    OutputError,
    PaddlegenError,
    SpecError,
    TemplateError,
)
from paddlegen.kustomize import (
    Drift,
    Plan,
    Staged,
    WriteReport,
    drift_of,
    generated_jobs,
    is_generated,
    plan_job,
    plan_overlays,
    remove_job,
    stream,
    write_job,
)
from paddlegen.loader import Document, parse_spec, read_spec_bytes
from paddlegen.model import Job, build_job
from paddlegen.render import Manifest, render_job
from paddlegen.stamp import Reused


@dataclass(frozen=True)
class Rendered:
    """One spec taken through the pipeline, before anything touches disk."""

    doc: Document
    job: Job
    manifests: list[Manifest]  # of the base spec
    plan: Plan
    warnings: list[Diagnostic]
    environments: dict[str, list[Manifest]] = field(default_factory=dict)  # merged overlays
    digest: str = ""  # the input digest its stamp records (see stamp.py); "" writes none
    reused = None  # always rendered; see Planned

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def file(self) -> str:
        return self.doc.file


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


def validate_document(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Every finding for a loaded spec: the schema first, then (on a schema-valid spec) checks."""
    from paddlegen.checks import semantic_diagnostics
    from paddlegen.schema import schema_diagnostics

    found = schema_diagnostics(doc)
    if found:
        return found  # the checks assume the shapes the schema guarantees
    found = semantic_diagnostics(doc, workload)
    if any(d.is_error for d in found):
        return found
    # Each environment is a spec of its own: merged, it must pass everything the base does.
    from paddlegen.overlays import env_document, overlay_path

    for env in doc.data.get("overlays", {}):
        merged = env_document(doc, env)
        for d in schema_diagnostics(merged) or semantic_diagnostics(merged, workload):
            if d not in found:  # a base finding shows once, not once per environment
                found.append(dataclasses.replace(d, path=overlay_path(doc, env, d.path)))
    return sorted(found)


def load_valid(path: str | Path, workload: str | None = None,
               raw: bytes | None = None) -> tuple[Document, list[Diagnostic]]:
    """Load and validate a spec; raise SpecError carrying every error, return the warnings."""
    doc = parse_spec(read_spec_bytes(path) if raw is None else raw, str(path))
    found = validate_document(doc, workload)
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
            found.extend(p for p in sorted(path.rglob("*"))
                         if p.suffix in SPEC_SUFFIXES and p.is_file()
                         and not any(part.startswith(".") for part in p.relative_to(path).parts)
                         and not is_generated(p))
        elif not path.exists() and any(c in item for c in "*?["):
            whole_set = True
            matches = sorted(p for p in Path().glob(item) if p.is_file())
            if not matches:
                raise InputError(f"{item}: no spec matches")
            found.extend(matches)
        else:
            found.append(path)
    return list(dict.fromkeys(found)), whole_set


def render_document(doc: Document, workload: str | None = None,
                    templates: str | None = None,
                    warnings: Iterable[Diagnostic] = (), *, argocd: bool = True,
                    digest: str = "") -> Rendered:
    from paddlegen.overlays import base_document, env_document

    job, manifests = _render_data(base_document(doc).data, workload, templates, argocd)
    environments = {env: _render_data(env_document(doc, env).data, workload, templates,
                                      argocd)[1]
                    for env in sorted(doc.data.get("overlays", {}))}
    plan = plan_overlays(job, manifests, environments) if environments \
        else plan_job(job, manifests)
    return Rendered(doc, job, manifests, plan, list(warnings), environments, digest)


def _render_data(data: dict, workload: str | None, templates: str | None,
                 argocd: bool) -> tuple[Job, list[Manifest]]:
    job = build_job(data, workload)
    manifests = render_job(job, templates)
    if argocd:
        from paddlegen.argocd import annotate

        manifests = annotate(manifests)
    return job, manifests


@dataclass(frozen=True)
class _Options:
    """What a render depends on besides the spec; ``toolchain`` is read once per call."""

    workload: str | None
    templates: str | None
    argocd: bool
    toolchain: str

    @classmethod
    def of(cls, workload: str | None, templates: str | None, argocd: bool) -> _Options:
        from paddlegen.stamp import toolchain_digest

        return cls(workload, templates, argocd, toolchain_digest(templates))

    def digest(self, raw: bytes) -> str:
        from paddlegen.stamp import input_digest

        return input_digest(raw, {"workload": self.workload, "argocd": self.argocd},
                            self.toolchain)


def render_specs(paths: Iterable[str | Path], workload: str | None = None,
                 templates: str | None = None, *, argocd: bool = True) -> list[Rendered]:
    """Render several specs; all are validated before any is rendered, all errors reported."""
    options = _Options.of(workload, templates, argocd)
    loaded: list[tuple[Document, list[Diagnostic], str]] = []
    errors: list[Diagnostic] = []
    for path in paths:
        raw = read_spec_bytes(path)
        try:
            doc, warns = load_valid(path, workload, raw)
            loaded.append((doc, warns, options.digest(raw)))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    if errors:
        raise SpecError("invalid spec", errors)
    rendered = [render_document(doc, workload, templates, warns, argocd=argocd, digest=digest)
                for doc, warns, digest in loaded]
    _refuse_same_name(rendered)
    return rendered


def plan_specs(paths: list[Path], workload: str | None = None, templates: str | None = None,
               *, argocd: bool = True, reuse: str | Path | None = None, jobs: int = 1,
               stage: bool = False) -> list[Planned]:
    """Like ``render_specs``, for writing and comparing: the job directories' files.

    With ``reuse`` (the output folder), a spec whose job directory there carries a matching
    stamp and untouched files is not rendered again (its ``Planned.reused`` says what is on
    disk). The rest are validated and rendered on up to ``jobs`` processes; with ``stage``
    (under the output lock), each worker also builds its job's new tree beside the old one
    (``Planned.staged``), so the files are written in parallel with the rendering. On any
    error every staged tree is discarded before the error is raised.
    """
    from paddlegen.pool import map_ordered

    options = _Options.of(workload, templates, argocd)
    found = _reusable(paths, Path(reuse), options) if reuse else {}
    todo = [path for path in paths if path not in found]
    work = [(path, options, Path(reuse) if stage and reuse else None) for path in todo]
    results = dict(zip(todo, map_ordered(_plan_one, work, jobs, warm=lambda: _warm(templates)),
                       strict=True))
    planned = [found.get(path) or results[path] for path in paths]
    try:
        _raise_first(list(results.values()))
        _refuse_same_name(planned)  # type: ignore[arg-type]
    except PaddlegenError:
        discard_staged(planned)
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


def discard_staged(planned: Sequence[Planned | Exception]) -> None:
    from paddlegen.kustomize import discard

    for p in planned:
        if isinstance(p, Planned) and p.staged is not None:
            discard(p.staged)


def _plan_one(work: tuple[Path, _Options, Path | None]) -> Planned | Exception:
    """One spec from file to plan (and staged tree); errors are returned, as they cross a
    process boundary."""
    path, options, stage_in = work
    try:
        raw = read_spec_bytes(path)
        doc, warnings = load_valid(path, options.workload, raw)
        r = render_document(doc, options.workload, options.templates, warnings,
                            argocd=options.argocd)
        planned = Planned(r.file, r.name, r.plan, r.warnings, options.digest(raw))
        if stage_in is not None:
            from paddlegen.kustomize import stage_job

            planned = dataclasses.replace(
                planned, staged=stage_job(stage_in, r.name, _stamped(planned)))
    except (InputError, SpecError, OutputError, TemplateError) as exc:
        return exc
    return planned


def render_into(paths: list[Path], out_dir: str | Path, workload: str | None = None,
                templates: str | None = None, *, argocd: bool = True, jobs: int = 1,
                prune: bool = False) -> tuple[list[Planned], list[tuple[str, WriteReport]]]:
    """``paddlegen render``: plan every spec, stage the changed jobs in the worker processes,
    then swap them in, in order. Any error leaves the output folder as it was (a folder this
    call had to create is removed again)."""
    from paddlegen.kustomize import commit, output_lock

    out = Path(out_dir)
    created = not os.path.lexists(out)
    try:
        with output_lock(out):  # held while workers stage: a second render waits
            planned = plan_specs(paths, workload, templates, argocd=argocd, reuse=out,
                                 jobs=jobs, stage=True)
            reports = [(p.name, _reused_report(p.reused) if p.reused
                        else _unstamped(commit(p.staged) if p.staged
                                        else write_job(out, p.name, _stamped(p))))
                       for p in planned]
            if prune:
                reports += [(name, _unstamped(remove_job(out, name)))
                            for name in _orphans(planned, out)]
    except PaddlegenError:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: what the failed render made, and no more
        raise
    return planned, reports


def _warm(templates: str | None) -> None:
    """Load what every spec needs once, before worker processes fork from this one."""
    from paddlegen.render import warm_templates
    from paddlegen.schema import warm_validator

    warm_templates(templates)
    warm_validator()


def _reusable(paths: list[Path], out: Path, options: _Options) -> dict[Path, Planned]:
    """The specs whose job directory in ``out`` is exactly what they render to."""
    from paddlegen import stamp

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
            digests[path] = options.digest(read_spec_bytes(path))
        except InputError:
            continue  # the full render reports it
    owners = Counter(digests.values())
    found: dict[Path, Planned] = {}
    for path, digest in digests.items():
        stamped = by_digest.get(digest, [])
        if owners[digest] != 1 or len(stamped) != 1:
            continue  # two specs, or two directories, with one input: render to find out why
        job_dir, body = stamped[0]
        reused = stamp.verify(job_dir, body, str(path))
        if reused is not None:
            found[path] = Planned(str(path), job_dir.name, {}, reused.warnings, digest, reused)
    return found


Output = Rendered | Planned


def _refuse_same_name(rendered: Sequence[Output]) -> None:
    seen: dict[str, str] = {}
    for r in rendered:
        if r.name in seen:
            raise OutputError(f"{r.file} and {seen[r.name]} both render job "
                              f"'{r.name}' into the same directory")
        seen[r.name] = r.file


def write_rendered(rendered: Sequence[Output], out_dir: str | Path,
                   prune: bool = False) -> list[tuple[str, WriteReport]]:
    """Write every job (with its stamp); with ``prune``, remove generated jobs not rendered."""
    from paddlegen.kustomize import output_lock

    out = Path(out_dir)
    with output_lock(out):  # a second render into `out` waits; no interleaved swaps
        reports = [(r.name, _reused_report(r.reused) if r.reused
                    else _unstamped(write_job(out, r.name, _stamped(r)))) for r in rendered]
        if prune:
            reports += [(name, _unstamped(remove_job(out, name)))
                        for name in _orphans(rendered, out)]
    return reports


def _stamped(r: Output) -> dict[str, str]:
    if not r.digest:
        return r.plan
    from paddlegen.stamp import STAMP, stamp_text

    return {**r.plan, STAMP: stamp_text(r.digest, r.plan, r.warnings)}


def _unstamped(report: WriteReport) -> WriteReport:
    """The report in the user's terms: manifests and kustomizations, not the cache beside them."""
    from paddlegen.stamp import STAMP

    for files in (report.written, report.unchanged, report.removed):
        if STAMP in files:
            files.remove(STAMP)
    return report


def _reused_report(reused: Reused) -> WriteReport:
    return WriteReport(unchanged=list(reused.files), kept=list(reused.kept))


def _orphans(rendered: Sequence[Output], out: Path) -> list[str]:
    """Generated job directories in ``out`` that no rendered spec owns any more."""
    names = {r.name for r in rendered}
    return [name for name in generated_jobs(out) if name not in names]


def drift(rendered: Sequence[Output], out_dir: str | Path,
          prune: bool = False) -> list[tuple[str, Drift]]:
    """How the output on disk differs from ``rendered`` (nothing is written)."""
    out = Path(out_dir)
    found = [(r.name, drift_of(out, r.name, r.plan)) for r in rendered if not r.reused]
    if prune:
        found += [(name, drift_of(out, name, {})) for name in _orphans(rendered, out)]
    return [(name, d) for name, d in found if d]


def manifest_stream(rendered: list[Rendered], env: str | None = None) -> str:
    """The manifests of every job (of environment ``env`` where a job has it) as one stream."""
    return stream([m for r in rendered
                   for m in (r.environments.get(env, r.manifests) if env else r.manifests)])


def manifest_files(rendered: list[Rendered], out_dir: str | Path) -> list[tuple[str, str]]:
    """``(path, text)`` of every manifest as it is (or would be) written under ``out_dir``."""
    return [(name, m.text()) for r in rendered for name, m in _named_manifests(r, out_dir)]


def _named_manifests(r: Rendered, out_dir: str | Path) -> list[tuple[str, Manifest]]:
    """Each manifest of a job, base and environments, with the path that names it."""
    base = Path(out_dir) / r.job.name
    pairs = [(str(base / m.filename), m) for m in r.manifests]
    for env, manifests in r.environments.items():
        pairs += [(str(base / "overlays" / env / m.filename), m) for m in manifests]
    return pairs


def validate_rendered(rendered: list[Rendered], out_dir: str | Path,
                      kubernetes_version: str | None = None, kubeconform: str | None = None,
                      prefer_binary: bool = True,
                      trees: Sequence[Path] = ()) -> tuple[list[Diagnostic], str]:
    """Validate every manifest (plus rendered ``trees`` on disk) in one kubeconform process.

    Findings in rendered manifests carry the spec position their field came from.
    """
    from paddlegen.provenance import field_tokens, spec_origin

    files = manifest_files(rendered, out_dir)
    found, used = validate_files(files, kubernetes_version, kubeconform, prefer_binary, trees)
    by_file = {name: (r.doc, m.obj) for r in rendered
               for name, m in _named_manifests(r, out_dir)}
    mapped = []
    for d in found:
        if d.file in by_file:
            doc, obj = by_file[d.file]
            d = dataclasses.replace(d, origin=spec_origin(doc, obj, field_tokens(d.path)))
        mapped.append(d)
    return mapped, used


def validate_files(files: list[tuple[str, str]], kubernetes_version: str | None = None,
                   kubeconform: str | None = None, prefer_binary: bool = True,
                   trees: Sequence[Path] = ()) -> tuple[list[Diagnostic], str]:
    """Validate ``(name, yaml text)`` manifests and rendered ``trees``, with kubeconform or
    else in process."""
    from paddlegen import k8sschemas
    from paddlegen.kubeconform import validate_manifests

    return validate_manifests(files, kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION,
                              kubeconform, prefer_binary, trees=trees)


def rendered_trees(path: str | Path) -> list[Path] | None:
    """The job directories of a rendered tree (a job directory or a folder of them), else None."""
    from paddlegen.kustomize import KUSTOMIZATION, is_generated

    root = Path(path)
    if not root.is_dir():
        return None
    if is_generated(root / KUSTOMIZATION) or is_generated(root / "base" / KUSTOMIZATION):
        return [root]
    return [root / name for name in generated_jobs(root)] or None
