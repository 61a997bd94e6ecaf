"""The tests' specs and renders: each workload's smallest spec with a test's own fields."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.overlays import deep_merge
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS
from paddlegen.yamlio import dump_yaml

HEADER = "apiVersion: paddlegen/v1\nkind: TrainingJob\n"
# A spec as a test gives it: the document, or its YAML text.
Source = Mapping[str, Any] | str


def spec(
    workload: str = DEFAULT_WORKLOAD, *, metadata: Mapping[str, Any] | None = None, **fields: Any
) -> dict[str, Any]:
    """``workload``'s smallest spec (``Workload.example``) with ``metadata`` and the spec
    ``fields`` merged in as an overlay merges: maps key by key, a list or a scalar replaces,
    None removes."""
    given = copy.deepcopy({"metadata": metadata or {}, "spec": fields})
    merged: dict[str, Any] = deep_merge(WORKLOADS[workload].example, given)
    return merged


def text_of(source: Source) -> str:
    """The YAML text of a spec."""
    return source if isinstance(source, str) else dump_yaml(dict(source))


def rendered(
    source: Source,
    *,
    ignore: Iterable[str] = (),
    warnings: Iterable[str] | None = None,
    argocd: bool = True,
) -> build.Rendered:
    """What a spec renders, in memory. It must have no error; given ``warnings``, no warning
    of another rule either (``ignore`` silences rules as --ignore does)."""
    doc = parse_spec(text_of(source), "spec.yaml")
    found = load.validate_document(doc, ignore=ignore)
    allowed = None if warnings is None else set(warnings)
    unwanted = [d for d in found if d.is_error or (allowed is not None and d.rule not in allowed)]
    assert not unwanted, unwanted
    return build.render_valid(doc, warnings=found, argocd=argocd)


def rendered_objects(source: Source, **options: Any) -> dict[tuple[str, str], Any]:
    """The objects a spec renders (``rendered``), by kind and name."""
    return {(m.kind, m.name): m.obj for m in rendered(source, **options).manifests}


def render_file(folder: Path, source: Source) -> build.Rendered:
    """What a spec written to ``folder``/spec.yaml renders, as `paddlegen render` reads it."""
    path = folder / "spec.yaml"
    path.write_text(text_of(source), encoding="utf-8")
    (done,) = build.render_specs([path])
    return done
