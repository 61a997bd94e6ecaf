"""The pipeline: load -> check -> build -> render -> plan -> write. The library never prints."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paddlegen.errors import Diagnostic, InputError, OutputError, SpecError
from paddlegen.kustomize import (
    Drift,
    Plan,
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
    reused = None  # always rendered; see batch.Planned

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def file(self) -> str:
        return self.doc.file


if TYPE_CHECKING:
    from typing import TypeAlias

    from paddlegen.batch import Planned

    # what refuse_same_name, write_rendered, drift and orphans take
    Output: TypeAlias = "Rendered | Planned"


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


def load_valid(
    path: str | Path, workload: str | None = None, raw: bytes | None = None
) -> tuple[Document, list[Diagnostic]]:
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
) -> Rendered:
    from paddlegen.overlays import base_document, env_document

    job, manifests = _render_data(base_document(doc).data, workload, templates, argocd)
    environments = {
        env: _render_data(env_document(doc, env).data, workload, templates, argocd)[1]
        for env in sorted(doc.data.get("overlays", {}))
    }
    plan = plan_overlays(job, manifests, environments) if environments else plan_job(job, manifests)
    return Rendered(doc, job, manifests, plan, list(warnings), environments, digest)


def _render_data(
    data: dict, workload: str | None, templates: str | None, argocd: bool
) -> tuple[Job, list[Manifest]]:
    job = build_job(data, workload)
    manifests = render_job(job, templates)
    if argocd:
        from paddlegen.argocd import annotate

        manifests = annotate(manifests)
    return job, manifests


def render_specs(
    paths: Iterable[str | Path],
    workload: str | None = None,
    templates: str | None = None,
    *,
    argocd: bool = True,
) -> list[Rendered]:
    """Render several specs; all are validated before any is rendered, all errors reported."""
    from paddlegen.stamp import Inputs

    inputs = Inputs.of(workload, templates, argocd)
    loaded: list[tuple[Document, list[Diagnostic], str]] = []
    errors: list[Diagnostic] = []
    for path in paths:
        raw = read_spec_bytes(path)
        try:
            doc, warns = load_valid(path, workload, raw)
            loaded.append((doc, warns, inputs.digest(raw)))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    if errors:
        raise SpecError("invalid spec", errors)
    rendered = [
        render_document(doc, workload, templates, warns, argocd=argocd, digest=digest)
        for doc, warns, digest in loaded
    ]
    refuse_same_name(rendered)
    return rendered


def refuse_same_name(rendered: Sequence[Output]) -> None:
    seen: dict[str, str] = {}
    for r in rendered:
        if r.name in seen:
            raise OutputError(
                f"{r.file} and {seen[r.name]} both render job '{r.name}' into the same directory"
            )
        seen[r.name] = r.file


def write_rendered(
    rendered: Sequence[Output], out_dir: str | Path, prune: bool = False
) -> list[tuple[str, WriteReport]]:
    """Write every job (with its stamp); with ``prune``, remove generated jobs not rendered."""
    from paddlegen.kustomize import output_lock
    from paddlegen.stamp import with_stamp, without_stamp

    out = Path(out_dir)
    with output_lock(out):  # a second render into `out` waits; no interleaved swaps
        reports = [
            (
                r.name,
                r.reused.report()
                if r.reused
                else without_stamp(write_job(out, r.name, with_stamp(r))),
            )
            for r in rendered
        ]
        if prune:
            reports += [
                (name, without_stamp(remove_job(out, name))) for name in orphans(rendered, out)
            ]
    return reports


def orphans(rendered: Sequence[Output], out: Path) -> list[str]:
    """Generated job directories in ``out`` that no rendered spec owns any more."""
    names = {r.name for r in rendered}
    return [name for name in generated_jobs(out) if name not in names]


def drift(
    rendered: Sequence[Output], out_dir: str | Path, prune: bool = False
) -> list[tuple[str, Drift]]:
    """How the output on disk differs from ``rendered`` (nothing is written)."""
    out = Path(out_dir)
    found = [(r.name, drift_of(out, r.name, r.plan)) for r in rendered if not r.reused]
    if prune:
        found += [(name, drift_of(out, name, {})) for name in orphans(rendered, out)]
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
    """Each manifest of a job, base and environments, with the path that names it."""
    base = Path(out_dir) / r.job.name
    pairs = [(str(base / m.filename), m) for m in r.manifests]
    for env, manifests in r.environments.items():
        pairs += [(str(base / "overlays" / env / m.filename), m) for m in manifests]
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
    from paddlegen.provenance import field_tokens, spec_origin

    files = manifest_files(rendered, out_dir)
    found, used = validate_files(files, kubernetes_version, kubeconform, prefer_binary, trees)
    by_file = {name: (r.doc, m.obj) for r in rendered for name, m in _named_manifests(r, out_dir)}
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
    from paddlegen import k8sschemas
    from paddlegen.kubeconform import validate_manifests

    return validate_manifests(
        files,
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION,
        kubeconform,
        prefer_binary,
        trees=trees,
    )


def rendered_trees(path: str | Path) -> list[Path] | None:
    """The job directories of a rendered tree (a job directory or a folder of them), else None."""
    from paddlegen.kustomize import KUSTOMIZATION, is_generated

    root = Path(path)
    if not root.is_dir():
        return None
    if is_generated(root / KUSTOMIZATION) or is_generated(root / "base" / KUSTOMIZATION):
        return [root]
    return [root / name for name in generated_jobs(root)] or None
