"""Environment overlays: a partial spec deep-merged over the base, positions kept (the layout
as kustomize `base/` + `overlays/<env>/` is output/patches.py)."""

from __future__ import annotations

import re
from typing import Any, TypeVar

from paddlegen.errors import Diagnostic
from paddlegen.spec.loader import Document, FieldPath, format_path

_T = TypeVar("_T")  # what a table holds per path: a Position, or a value's source text

DELETE = None  # an overlay value of null removes the key


def deep_merge(base: Any, overlay: Any) -> Any:
    """Maps merge key by key, lists and scalars replace, null removes."""
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        return overlay
    merged = dict(base)
    for key, value in overlay.items():
        if value is DELETE:
            merged.pop(key, None)
        else:
            merged[key] = deep_merge(base.get(key), value)
    return merged


# Top-level sections about the document rather than the job: never part of what is rendered.
_NOT_THE_JOB = ("overlays", "ignore")


def base_document(doc: Document) -> Document:
    """The job of the spec: without its overlays and its ``ignore`` entries."""
    data = {k: v for k, v in doc.data.items() if k not in _NOT_THE_JOB}
    return Document(doc.file, data, doc.values, doc.keys, doc.written)


def env_document(doc: Document, env: str) -> Document:
    """The merged spec of one environment; overlay values keep the overlay's positions."""
    overlay = doc.data["overlays"][env]
    data = deep_merge(base_document(doc).data, overlay)
    prefix: FieldPath = ("overlays", env)
    return Document(
        doc.file,
        data,
        _shift(doc.values, prefix),
        _shift(doc.keys, prefix),
        _shift(doc.written, prefix),
    )


# An overlay renders as a strategic merge patch of the base (output/patches.py), where
# kustomize reads a `$patch` key of any mapping, or a list item of that key alone, as a
# directive (delete, replace or merge) and removes it (kustomize v5.7.1: kyaml v0.20.1
# yaml/merge2/smpdirective.go:25-85); merged here, it would be a field. The environment would
# render one way with --env and another through `kustomize build`.
PATCH_DIRECTIVE = "$patch"


def patch_directives(doc: Document) -> list[Diagnostic]:
    """An error at each `$patch` key in the spec's overlays."""
    found = []

    def walk(node: Any, path: FieldPath) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == PATCH_DIRECTIVE:
                    found.append(_directive(doc, (*path, key), value))
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*path, i))

    overlays = doc.data.get("overlays") if isinstance(doc.data, dict) else None
    if isinstance(overlays, dict):
        walk(overlays, ("overlays",))
    return found


def _directive(doc: Document, path: FieldPath, value: Any) -> Diagnostic:
    pos = doc.where(path, key=True)
    message = (
        f"'{PATCH_DIRECTIVE}: {value}' is a directive to kustomize, which acts on it in this "
        "overlay's patch and drops the key, but a field to the merged spec: the environment "
        "would render two ways"
    )
    hint = "write the values the environment should have; null removes a field"
    return Diagnostic(
        doc.file, pos.line, pos.col, "error", format_path(path), message, "schema", hint
    )


def overlay_path(doc: Document, env: str, path: str) -> str:
    """A finding's ``$.spec.x`` in environment ``env`` as ``$.overlays.<env>.spec.x`` when the
    overlay sets that field (else the field comes from the base and keeps its base path)."""
    found = re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path[1:])
    tokens: FieldPath = tuple(int(index) if index else key for key, index in found)
    full: FieldPath = ("overlays", env, *tokens)
    if format_path(tokens) != path or (full not in doc.values and full not in doc.keys):
        return path  # not a spec path it can read (a key with dots), or not in the overlay
    return format_path(full)


def _shift(table: dict[FieldPath, _T], prefix: FieldPath) -> dict[FieldPath, _T]:
    # Positions inside the overlay win over the base's for the same merged path.
    shifted = {
        p[len(prefix) :]: pos
        for p, pos in table.items()
        if p[: len(prefix)] == prefix and len(p) > len(prefix)
    }
    return {**table, **shifted}
