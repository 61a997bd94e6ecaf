"""Environments as kustomize overlays: exact JSON patches from base objects to each environment."""

from __future__ import annotations

from typing import Any


def overlay_kustomization(
    base_files: dict[str, dict[str, Any]], env_files: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The overlay's kustomization and its extra files, from base and env objects by file name.

    Objects in both become JSON patches (RFC 6902, exact), objects only in the environment are
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
        ops = json_patch(base_files[name], obj)
        if ops:
            files[f"patch-{name}"] = ops
            patches.append({"path": f"patch-{name}", "target": _target(obj)})
    for name, obj in base_files.items():
        if name not in env_files:
            identity = {
                k: obj["metadata"][k] for k in ("name", "namespace") if k in obj["metadata"]
            }
            files[f"delete-{name}"] = {
                "$patch": "delete",
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


def json_patch(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """RFC 6902 operations turning ``before`` into ``after``, in a deterministic order.

    Written here rather than taken from the `jsonpatch` package: its list diff orders its
    operations differently from one process to the next, and output must be byte-stable.
    Maps are diffed key by key (sorted), lists of equal length item by item, and any other
    change replaces the value: every path stays valid as the operations apply in order.
    """
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[dict[str, Any]] = []
        for key in sorted(before.keys() | after.keys()):
            here = f"{path}/{_escape(key)}"
            if key not in after:
                ops.append({"op": "remove", "path": here})
            elif key not in before:
                ops.append({"op": "add", "path": here, "value": after[key]})
            else:
                ops += json_patch(before[key], after[key], here)
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            op
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for op in json_patch(b, a, f"{path}/{i}")
        ]
    if before == after and type(before) is type(after):
        return []
    return [{"op": "replace", "path": path, "value": after}]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # RFC 6901


def _target(obj: dict[str, Any]) -> dict[str, str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    target = {"version": version, "kind": obj["kind"], "name": obj["metadata"]["name"]}
    if group:
        target = {"group": group, **target}
    return target
