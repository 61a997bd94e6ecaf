"""The pipeline: load -> check -> build -> render -> plan -> write. The library never prints."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from paddlegen.errors import Diagnostic, OutputError, SpecError
from paddlegen.kustomize import Plan, WriteReport, plan_job, stream, write_job
from paddlegen.loader import Document, read_spec
from paddlegen.model import Job, build_job
from paddlegen.render import Manifest, render_job


@dataclass(frozen=True)
class Rendered:
    """One spec taken through the pipeline, before anything touches disk."""

    doc: Document
    job: Job
    manifests: list[Manifest]
    plan: Plan
    warnings: list[Diagnostic]


def validate_document(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Every finding for a loaded spec: the schema first, then (on a schema-valid spec) checks."""
    from paddlegen.checks import semantic_diagnostics
    from paddlegen.schema import schema_diagnostics

    found = schema_diagnostics(doc)
    if found:
        return found  # the checks assume the shapes the schema guarantees
    return semantic_diagnostics(doc, workload)


def load_valid(path: str | Path, workload: str | None = None) -> tuple[Document, list[Diagnostic]]:
    """Load and validate a spec; raise SpecError carrying every error, return the warnings."""
    doc = read_spec(path)
    found = validate_document(doc, workload)
    errors = [d for d in found if d.is_error]
    if errors:
        raise SpecError(f"{doc.file}: invalid spec", found)
    return doc, found


def render_document(doc: Document, workload: str | None = None,
                    templates: str | None = None,
                    warnings: Iterable[Diagnostic] = ()) -> Rendered:
    job = build_job(doc.data, workload)
    manifests = render_job(job, templates)
    return Rendered(doc, job, manifests, plan_job(job, manifests), list(warnings))


def render_specs(paths: Iterable[str | Path], workload: str | None = None,
                 templates: str | None = None) -> list[Rendered]:
    """Render several specs; all are validated before any is rendered, all errors reported."""
    loaded: list[tuple[Document, list[Diagnostic]]] = []
    errors: list[Diagnostic] = []
    for path in paths:
        try:
            loaded.append(load_valid(path, workload))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    if errors:
        raise SpecError("invalid spec", errors)
    rendered = [render_document(doc, workload, templates, warns) for doc, warns in loaded]
    _refuse_same_name(rendered)
    return rendered


def _refuse_same_name(rendered: list[Rendered]) -> None:
    seen: dict[str, str] = {}
    for r in rendered:
        if r.job.name in seen:
            raise OutputError(f"{r.doc.file} and {seen[r.job.name]} both render job "
                              f"'{r.job.name}' into the same directory")
        seen[r.job.name] = r.doc.file


def write_rendered(rendered: list[Rendered], out_dir: str | Path) -> list[tuple[str, WriteReport]]:
    return [(r.job.name, write_job(Path(out_dir), r.job.name, r.plan)) for r in rendered]


def manifest_stream(rendered: list[Rendered]) -> str:
    return stream([m for r in rendered for m in r.manifests])
