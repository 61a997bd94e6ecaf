"""Validate: specs, the manifests they render to and rendered trees, every finding collected."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paddlegen.errors import Diagnostic, SpecError
from paddlegen.output.layout import generated_jobs
from paddlegen.pipeline.build import Rendered, render_valid, same_name_diagnostics
from paddlegen.pipeline.load import collect_specs, require_valid
from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import Document, is_setup, parse_spec, read_spec_bytes

if TYPE_CHECKING:
    from paddlegen.validate.locations import ExtraSchemas
    from paddlegen.validate.target import Server


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
    extra: ExtraSchemas | None = None,
) -> tuple[list[Diagnostic], str]:
    """Validate every manifest (plus rendered ``trees`` on disk) in one kubeconform process.

    Findings in rendered manifests carry the spec position their field came from.
    """
    from paddlegen.validate.provenance import field_tokens, spec_origin

    files = manifest_files(rendered, out_dir)
    found, used = validate_files(
        files, kubernetes_version, kubeconform, prefer_binary, trees, extra
    )
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
    extra: ExtraSchemas | None = None,
) -> tuple[list[Diagnostic], str]:
    """Validate ``(name, yaml text)`` manifests and rendered ``trees``, with kubeconform or
    else in process; ``extra``: schemas beyond paddlegen's."""
    from paddlegen.validate import k8s_schemas as k8sschemas
    from paddlegen.validate.locations import NO_EXTRA
    from paddlegen.validate.manifests import validate_manifests

    return validate_manifests(
        files,
        kubernetes_version or k8sschemas.DEFAULT_KUBERNETES_VERSION,
        kubeconform,
        prefer_binary,
        trees=trees,
        extra=extra or NO_EXTRA,
    )


@dataclass(frozen=True)
class Validation:
    """What ``run_validate`` (``validate_inputs``) found, and in how much."""

    diagnostics: list[Diagnostic]
    specs: int  # spec files read
    trees: int  # rendered job directories read
    backend: str | None  # "kubeconform" or "in-process"; None when no manifest was checked
    files: tuple[str, ...] = ()  # the spec files read, as named
    # KueueSetups among the files, and the valid specs (api.run_validate checks them together)
    setups: tuple[Document, ...] = ()
    valid: tuple[Document, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing was there to validate: no spec, rendered job or KueueSetup."""
        return not self.specs and not self.trees and not self.setups

    def refuse_invalid(self) -> None:
        """SpecError with every finding when one is an error."""
        if any(d.is_error for d in self.diagnostics):
            raise SpecError("invalid input", self.diagnostics)

    def summary(self) -> str:
        """``2 specs and 1 KueueSetup valid``: what was validated, of each kind."""
        counts = (
            (self.specs, "spec"),
            (self.trees, "rendered job"),
            (len(self.setups), "KueueSetup"),
        )
        return (
            " and ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts if n) + " valid"
        )


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
    extra: ExtraSchemas | None = None,
) -> Validation:
    """``paddlegen validate``: spec files and folders of them checked against the schema and
    the rules (with ``manifests``, the manifests they render to as well, in memory), and
    rendered job directories validated as manifests; every finding collected. ``ignore``
    silences rules in every spec, as for ``render_specs``; ``extra`` names schemas beyond
    paddlegen's. With ``server``, the specs'
    objects also go to that API server as a server-side apply dry-run. A KueueSetup among
    ``items`` or their folders is set apart (``setups``) for the caller."""
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
    setups = []
    for spec in paths:
        try:
            doc = parse_spec(read_spec_bytes(spec), str(spec))
            if is_setup(doc.data):  # the caller checks it, and the specs against it
                setups.append(doc)
                continue
            warnings = require_valid(doc, workload, ignore)
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
        [render_valid(doc, workload, warnings=w) for doc, w in valid] if manifests or server else []
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
            extra,
        )
        found.extend(more)
    if trees:  # and the job's own Component, as kustomize builds it
        from paddlegen.output.drift import custom_findings

        found.extend(d for tree in trees for d in custom_findings(tree))
    if server and rendered and not any(d.is_error for d in found):
        from paddlegen.validate.server import dry_run

        found.extend(dry_run(rendered, server))
    read = [p for p in paths if str(p) not in {d.file for d in setups}]
    return Validation(
        found,
        len(read),
        len(trees),
        backend,
        tuple(map(str, read)),
        tuple(setups),
        tuple(doc for doc, _ in valid),
    )


def any_rendered_tree(items: Iterable[str | Path]) -> bool:
    """Whether one of ``items`` is a rendered tree, which validates as manifests."""
    return any(rendered_trees(item) is not None for item in items)


def rendered_trees(path: str | Path) -> list[Path] | None:
    """The job directories of a rendered tree (a job directory or a folder of them), else None."""
    from paddlegen.output.layout import is_job_folder

    root = Path(path)
    if not root.is_dir():
        return None
    if is_job_folder(root):
        return [root]
    return [root / name for name in generated_jobs(root)] or None
