"""Manifest validation for callers: kubeconform when found, else the in-process backend."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from paddlegen.errors import Diagnostic
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.kubeconform import (
    DEFAULT_TIMEOUT,
    find_kubeconform,
    run_kubeconform,
    tree_files,
)
from paddlegen.validate.locations import NO_EXTRA, ExtraSchemas
from paddlegen.validate.patched import patched_files


def validate_manifests(
    files: Sequence[tuple[str, str]],
    kubernetes_version: str = k8sschemas.DEFAULT_KUBERNETES_VERSION,
    kubeconform: str | os.PathLike[str] | None = None,
    prefer_binary: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    trees: Sequence[Path] = (),
    extra: ExtraSchemas = NO_EXTRA,
) -> tuple[list[Diagnostic], str]:
    """Validate ``(name, yaml text)`` manifests and rendered ``trees`` on disk; returns the
    findings and which path ran.

    The binary runs when found (and preferred); otherwise the in-process path, whose use the
    caller should mention once; ``extra`` names more schemas. The environments of rendered
    trees are validated too, each patched object under its patch file's name
    (validate/patched.py).
    """
    patched, broken = patched_files(trees)
    files = [*files, *patched]
    binary = find_kubeconform(kubeconform) if prefer_binary else None
    if binary:
        found = run_kubeconform(files, binary, kubernetes_version, timeout, trees, extra)
        return sorted([*found, *broken]), "kubeconform"
    found = validate_in_process([*files, *tree_files(trees)], kubernetes_version, extra)
    return sorted([*found, *broken]), "in-process"
