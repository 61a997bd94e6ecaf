"""The patched objects of a rendered tree's environments, built in process as kustomize would.

A job with overlays keeps each environment as strategic-merge patches
(`overlays/<env>/patch-<file>`) against its `base/` objects. Neither backend can validate a
patch file: a prod patch setting `replicas: eight` would pass while `kustomize build` prints
it. So each patched object is rebuilt here (validate/merge.py), base object plus patch, and
validated under the patch file's name; objects only
an environment has are files of their own, which the backends read directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from paddlegen.errors import Diagnostic, Rule
from paddlegen.output.layout import KUSTOMIZATION
from paddlegen.reading import read_text
from paddlegen.validate.merge import PatchError, apply_patch
from paddlegen.yamlio import dump_yaml, load_all

RULE = Rule(
    "overlay",
    "an environment's patch applies to its base object",
    explanation=(
        "An environment's patch must apply to its base object; one that does not is reported, as "
        "kustomize would fail on it."
    ),
    severity="error",
)


def patched_files(trees: Iterable[Path]) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """``(patch file, YAML of the patched object)`` for every patch of every environment, and
    a finding for each patch that does not apply. Symlinks are not followed."""
    files: list[tuple[str, str]] = []
    broken: list[Diagnostic] = []
    for tree in trees:
        for name, obj, problem in _job_overlays(tree):
            if problem:
                broken.append(Diagnostic(file=name, message=problem, rule=RULE.id))
            else:
                files.append((name, dump_yaml(obj)))
    return files, broken


def _job_overlays(job: Path) -> Iterator[tuple[str, Any, str]]:
    overlays = job / "overlays"
    if not overlays.is_dir() or overlays.is_symlink():
        return
    for env in sorted(p for p in overlays.iterdir() if p.is_dir() and not p.is_symlink()):
        kustomization = _document(env / KUSTOMIZATION)
        for patch in kustomization.get("patches", []) if isinstance(kustomization, dict) else []:
            name = patch.get("path", "") if isinstance(patch, dict) else ""
            if name.startswith("patch-"):
                base = job / "base" / name[len("patch-") :]
                yield (str(env / name), *_patched(base, env / name))


def _patched(base: Path, patch: Path) -> tuple[Any, str]:
    """The patched object and "", or None and why the patch does not apply."""
    obj = _document(base)
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return None, f"this patch has no object to apply to: {base} is not one"
    try:
        return apply_patch(obj, _document(patch)), ""
    except PatchError as exc:
        return None, f"this patch does not apply to {base}: {exc}"


def _document(path: Path) -> Any:
    """The one YAML document of a generated file; None for a missing file or a symlink."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        docs = load_all(read_text(path))
    except (OSError, yaml.YAMLError):
        return None
    return docs[0] if len(docs) == 1 else None
