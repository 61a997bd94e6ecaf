"""A strategic-merge patch applied to one object as kustomize v5.7.1 applies it (kyaml's
merge2), so that `validate` sees the object an overlay's patch makes.

Maps merge and `null` removes a field; a `$patch: delete` or `$patch: replace` map is removed
or taken as it is; a list kustomize merges by key (output/merge_keys.py) takes the patch's
elements first, merged with the base's of the same key, and then the base's other elements
in their order, minus those the patch marks `$patch: delete` (kyaml/yaml/walk/
associative_sequence.go:231-240 and 310-330, with the prepend option of api/filters/
patchstrategicmerge/patchstrategicmerge.go:24 at kustomize/v5.7.1); a list starting with
`{$patch: replace}` is the rest of it; any other list is replaced whole. The object keeps its
name and namespace (api/resource/resource.go:492-512).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paddlegen.output.merge_keys import Keys, Path, merged_lists
from paddlegen.output.patches import DIRECTIVE


class PatchError(ValueError):
    """The patch does not fit the object: a map where it has a list, or another object."""


_GONE = object()


def apply_patch(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``obj`` (not modified) with ``patch`` applied; PatchError when it does not fit."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic-merge patch is one mapping")
    for field in ("apiVersion", "kind"):
        if patch.get(field, obj[field]) != obj[field]:
            raise PatchError(f"its {field} is {patch[field]!r}, not {obj[field]!r}")
    lists = merged_lists(obj["apiVersion"], obj["kind"])
    merged: dict[str, Any] = _merge(obj, patch, (), lists)
    merged["metadata"] = {**merged["metadata"], "name": obj["metadata"]["name"]}
    if "namespace" in obj["metadata"]:
        merged["metadata"]["namespace"] = obj["metadata"]["namespace"]
    else:
        merged["metadata"].pop("namespace", None)
    return merged


def _merge(dest: Any, patch: Any, path: Path, lists: Mapping[Path, Keys]) -> Any:
    if dest is not None and _shape(dest) != _shape(patch):
        # kyaml refuses to merge nodes of different kinds (kyaml/yaml/walk/walk.go:56-80 at
        # kustomize/v5.7.1)
        raise PatchError(
            f"{_where(path)} is a {_shape(patch)} in the patch, a {_shape(dest)} in the object"
        )
    if isinstance(patch, dict):
        directive = patch.get(DIRECTIVE)
        body = {k: v for k, v in patch.items() if k != DIRECTIVE}
        if directive == "delete":
            return _GONE
        if directive == "replace" or dest is None:
            return body
        out = dict(dest)
        for key, value in body.items():
            merged = None if value is None else _merge(dest.get(key), value, (*path, key), lists)
            if merged is None or merged is _GONE:
                out.pop(key, None)
            else:
                out[key] = merged
        return out
    if isinstance(patch, list):
        keys = lists.get(path)
        if keys is None or dest is None:
            return patch
        if patch[:1] == [{DIRECTIVE: "replace"}]:
            return patch[1:]
        return _merge_keyed(dest, patch, keys, (*path, "[]"), lists)
    return patch


def _merge_keyed(
    dest: list[Any], patch: list[Any], keys: Keys, path: Path, lists: Mapping[Path, Keys]
) -> list[Any]:
    def identity(item: Any) -> Any:
        if not keys:
            return repr(item)  # a list of scalars merged by value
        return repr([item.get(k) for k in keys]) if isinstance(item, dict) else repr(item)

    base = {identity(item): item for item in dest}
    out: list[Any] = []
    named: set[Any] = set()
    for item in patch:
        named.add(identity(item))
        merged = _merge(base.get(identity(item)), item, path, lists)
        if merged is not _GONE:
            out.append(merged)
    return out + [item for item in dest if identity(item) not in named]


def _shape(value: Any) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "value"


def _where(path: Path) -> str:
    return ".".join(path).replace(".[]", "[]") or "the object"
