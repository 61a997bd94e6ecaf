"""Environments as kustomize overlays: strategic-merge patches from base objects to each
environment, keyed by names as kustomize users write them.

Each patch holds only what the environment changes, and kustomize v5.7.1 turns the base
object into exactly the environment's (tests/e2e/test_overlay_equivalence.py builds them).
Elements of a list kustomize merges by key (output/merge_keys.py) are named by that key, so
a patch still applies when the job's own Component adds or reorders them; every other list
that changes is given whole, as kustomize replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paddlegen.output.merge_keys import Keys, Path, merged_lists

DIRECTIVE = "$patch"  # strategic merge's directive key: delete, replace


class _Same:
    """No change: distinct from every YAML value, None (a removal) included."""


SAME = _Same()


def overlay_kustomization(
    base_files: dict[str, dict[str, Any]], env_files: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The overlay's kustomization and its extra files, from base and env objects by file name.

    Objects in both become strategic-merge patches, objects only in the environment are
    added as resources, objects only in the base are deleted with a `$patch: delete`.
    """
    files: dict[str, Any] = {}
    resources: list[str] = ["../../base"]
    patches: list[dict[str, Any]] = []
    for name, obj in env_files.items():
        if name not in base_files:
            files[name] = obj
            resources.append(name)
            continue
        patch = strategic_patch(base_files[name], obj)
        if patch is not None:
            files[f"patch-{name}"] = patch
            patches.append({"path": f"patch-{name}", "target": _target(obj)})
    for name, obj in base_files.items():
        if name not in env_files:
            identity = {
                k: obj["metadata"][k] for k in ("name", "namespace") if k in obj["metadata"]
            }
            files[f"delete-{name}"] = {
                DIRECTIVE: "delete",
                "apiVersion": obj["apiVersion"],
                "kind": obj["kind"],
                "metadata": identity,
            }
            patches.append({"path": f"delete-{name}"})
    kustomization: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }
    if patches:
        kustomization["patches"] = patches
    return kustomization, files


def strategic_patch(base: dict[str, Any], env: dict[str, Any]) -> dict[str, Any] | None:
    """The strategic-merge patch that turns ``base`` into ``env`` (one object, same kind and
    name), or None when they are equal.

    The namespace is left out: kustomize keeps an object's namespace through a patch
    (api/resource/resource.go:492-512 at kustomize/v5.7.1) and the overlay's kustomization
    states it. Labels and annotations that lose a key are given whole with `$patch: replace`:
    kustomize reads `null` there as the string "null".
    """
    lists = merged_lists(env["apiVersion"], env["kind"])
    meta_base, meta_env = base["metadata"], env["metadata"]
    diff: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        if key not in meta_env:
            if key in meta_base:
                diff[key] = {DIRECTIVE: "delete"}
        elif meta_base.get(key, {}).keys() - meta_env[key].keys():
            diff[key] = {DIRECTIVE: "replace", **meta_env[key]}
        else:
            change = _diff(meta_base.get(key), meta_env[key], ("metadata", key), lists)
            if change is not SAME:
                diff[key] = change
    rest = _diff(_without_meta(base), _without_meta(env), (), lists)
    rest = {} if rest is SAME else rest
    diff.update(rest.pop("metadata", {}))
    if not diff and not rest:
        return None
    metadata = {"name": env["metadata"]["name"], **diff}
    return {"apiVersion": env["apiVersion"], "kind": env["kind"], "metadata": metadata, **rest}


def _without_meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("labels", "annotations")}
    meta.pop("namespace", None)
    return {**{k: v for k, v in obj.items() if k != "metadata"}, "metadata": meta}


def _diff(base: Any, env: Any, path: Path, lists: Mapping[Path, Keys]) -> Any:
    """What a strategic-merge patch holds at ``path`` to turn ``base`` into ``env``."""
    if isinstance(base, dict) and isinstance(env, dict):
        out: dict[str, Any] = {}
        for key, value in env.items():
            change = _diff(base[key], value, (*path, key), lists) if key in base else value
            if change is not SAME:
                out[key] = change
        out.update((key, None) for key in base if key not in env)
        return out or SAME
    if isinstance(base, list) and isinstance(env, list):
        if base == env:
            return SAME
        keys = lists.get(path)
        if keys is None:
            return env  # replaced whole
        if len(keys) == 1 and _keyed(base, keys[0]) and _keyed(env, keys[0]):
            return _keyed_diff(base, env, keys[0], path, lists)
        return [{DIRECTIVE: "replace"}, *env]
    if base == env and type(base) is type(env):
        return SAME
    return env


def _keyed(items: list[Any], key: str) -> bool:
    """Every element a map holding ``key``, its values distinct scalars."""
    values = [item.get(key) if isinstance(item, dict) else None for item in items]
    return None not in values and len(set(map(repr, values))) == len(values)


def _keyed_diff(
    base: list[dict[str, Any]],
    env: list[dict[str, Any]],
    key: str,
    path: Path,
    lists: Mapping[Path, Keys],
) -> list[dict[str, Any]]:
    """A merged list's patch: changed, moved and new elements named by ``key``, removed ones
    with `$patch: delete`.

    kustomize puts the patch's elements first, in the patch's order, and then the elements it
    does not name, in the base's order (kyaml/yaml/walk/associative_sequence.go:231-240 and
    310-330, with the prepend option of api/filters/patchstrategicmerge/
    patchstrategicmerge.go:24 at kustomize/v5.7.1). So the longest tail of ``env`` that the
    base holds unchanged and in its order goes unnamed, and every element before it is named,
    in ``env``'s order.
    """
    by_key = {item[key]: (i, item) for i, item in enumerate(base)}
    tail = len(env)
    last = len(base)
    while tail:
        found = by_key.get(env[tail - 1][key])
        if found is None or found[1] != env[tail - 1] or found[0] >= last:
            break
        last = found[0]
        tail -= 1
    patch: list[dict[str, Any]] = []
    for item in env[:tail]:
        if item[key] not in by_key:
            patch.append(item)
            continue
        change = _diff(by_key[item[key]][1], item, (*path, "[]"), lists)
        rest = {k: v for k, v in change.items() if k != key} if change is not SAME else {}
        patch.append({key: item[key], **rest})
    kept = {item[key] for item in env}
    patch += [{key: item[key], DIRECTIVE: "delete"} for item in base if item[key] not in kept]
    return patch


def _target(obj: dict[str, Any]) -> dict[str, str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    target = {"version": version, "kind": obj["kind"], "name": obj["metadata"]["name"]}
    if group:
        target = {"group": group, **target}
    return target
