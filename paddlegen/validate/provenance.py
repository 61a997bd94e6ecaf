"""Which spec field an output field came from, to point manifest findings back at the spec."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from paddlegen.spec.loader import Document, FieldPath

# Keys every manifest has: matching on them would point anywhere.
_STRUCTURAL = {"spec", "metadata", "template", "containers", "name", "kind", "apiVersion"}


def _leaves(data: Any, path: FieldPath = ()) -> Iterator[tuple[FieldPath, Any]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, key), value
            yield from _leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield (*path, i), value
            yield from _leaves(value, (*path, i))


def _lookup(obj: Any, tokens: Sequence[object]) -> Any:
    for token in map(str, tokens):
        if isinstance(obj, list) and token.isdigit() and int(token) < len(obj):
            obj = obj[int(token)]
        elif isinstance(obj, dict) and token in obj:
            obj = obj[token]
        else:
            return None
    return obj


def spec_origin(doc: Document, manifest: dict[str, Any], tokens: Sequence[object]) -> str:
    """`file:line:col` of ``origin_path``; empty when there is none."""
    path = origin_path(doc, manifest, tokens)
    return _where(doc, path) if path is not None else ""


def origin_path(
    doc: Document, manifest: dict[str, Any], tokens: Sequence[object]
) -> FieldPath | None:
    """The spec field that most likely produced ``manifest`` at ``tokens``.

    Templates copy spec values through unchanged, so the spec field holding the same value
    (preferring one with the same key name) is its source; with no such value, a spec field
    named like the output field (or its nearest named ancestor) is the best pointer. None
    when nothing in the spec matches: the field was derived by paddlegen itself.
    """
    value = _lookup(manifest, tokens)
    names = [str(t) for t in tokens if not str(t).isdigit()]
    leaves = list(_leaves(doc.data))
    scalar = value is not None and not isinstance(value, (dict, list))
    candidates = [
        p for p, v in leaves if scalar and not isinstance(v, (dict, list)) and str(v) == str(value)
    ]
    if candidates:
        named = [p for p in candidates if names and p[-1] == names[-1]]
        return (named or candidates)[0]
    for name in reversed(names):
        if name in _STRUCTURAL:
            continue
        named = [p for p, _ in leaves if p and p[-1] == name]
        if named:
            return named[0]
    return None


def _where(doc: Document, path: FieldPath) -> str:
    pos = doc.where(path)
    return f"{doc.file}:{pos.line}:{pos.col}"


def field_tokens(diagnostic_path: str) -> list[str]:
    """``Kind/name spec.containers[0].image`` -> ``["spec", "containers", "0", "image"]``."""
    _, _, field = diagnostic_path.partition(" ")
    return [t for t in field.replace("[", ".").replace("]", "").split(".") if t]
