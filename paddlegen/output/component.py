"""A job's `custom/` Component checked as kustomize builds it: every file it names is there,
in or below it (in process, at the entry's line and column), then, with kustomize on PATH,
the job's kustomization that lists it built.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import yaml

from paddlegen.errors import ToolError
from paddlegen.output.layout import COMPONENT, CUSTOM, KUSTOMIZATION, KUSTOMIZATIONS

BUILD_TIMEOUT = 60.0  # seconds for one `kustomize build` of a job folder

# The fields of a kustomization that name files or folders relative to it (kustomize v5.7.1
# api/types/kustomization.go:74-154): lists of paths, lists of maps with a `path`, and the
# generators' `files` (each `KEY=path` or `path`), `envs` and `env`.
_PATH_LISTS = ("resources", "components", "crds", "patchesStrategicMerge")
_PATH_MAPS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_FOLDERS_TAKEN = ("resources", "components")  # a kustomization's folder, not a file
_REMOTE = ("git@", "github.com/", "gitlab.com/", "bitbucket.org/")


class Problem(NamedTuple):
    """Why `custom/` would not deploy: the file (relative to the job folder), why, and where
    in it (line and column from 1; 0 when the file as a whole)."""

    rel: str
    why: str
    line: int = 0
    col: int = 0


def component_problems(job_dir: Path, text: str) -> list[Problem]:
    """What keeps the Component ``text`` (`custom/kustomization.yaml` of ``job_dir``) from
    building: the files it names that kustomize cannot load, else kustomize's own verdict."""
    references = list(_references(text))
    found = [
        Problem(COMPONENT, why, node.start_mark.line + 1, node.start_mark.column + 1)
        for field, path, node in references
        for why in [_unloadable(job_dir / CUSTOM, field, path)]
        if why
    ]
    return found or _built(job_dir, references)


def _references(text: str) -> Iterator[tuple[str, str, yaml.ScalarNode]]:
    """Each path the kustomization ``text`` names: its field, the path, and its node."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return  # no Component (drift.py says so first)
    for key, value in root.value if isinstance(root, yaml.MappingNode) else ():
        field = key.value
        items = value.value if isinstance(value, yaml.SequenceNode) else []
        for item in items:
            if field in _PATH_LISTS and isinstance(item, yaml.ScalarNode):
                if "\n" not in item.value:  # patchesStrategicMerge also takes a patch inline
                    yield field, item.value, item
            elif field in (*_PATH_MAPS, *_GENERATORS) and isinstance(item, yaml.MappingNode):
                yield from _paths_in(field, item)


def _paths_in(field: str, item: yaml.MappingNode) -> Iterator[tuple[str, str, yaml.ScalarNode]]:
    one = "path" if field in _PATH_MAPS else "env"  # a generator's `env`: one file
    for key, value in item.value:
        if key.value == one and isinstance(value, yaml.ScalarNode):
            yield field, value.value, value
        elif field in _GENERATORS and key.value in ("files", "envs"):
            for entry in value.value if isinstance(value, yaml.SequenceNode) else []:
                if isinstance(entry, yaml.ScalarNode):
                    yield field, entry.value.rpartition("=")[2], entry


def _unloadable(custom: Path, field: str, path: str) -> str:
    """Why kustomize cannot load ``path`` of ``field``, or "". Remote resources are its own
    business; a file must lie in or below the Component's folder once symlinks are resolved
    (kustomize v5.7.1 api/internal/loader/loadrestrictions.go:15-30, the default)."""
    if "://" in path or path.startswith(_REMOTE):
        return ""
    full = custom / path
    where = f"{path} (under {field}:)"
    if not os.path.lexists(full):
        return f"{where}: no such file in {CUSTOM}/, so `kustomize build` of the job fails"
    if full.is_dir():
        if field not in _FOLDERS_TAKEN:
            return f"{where}: a folder, where {field} takes a file"
        if not any((full / name).is_file() for name in KUSTOMIZATIONS):
            return f"{where}: a folder without a {KUSTOMIZATION}, which kustomize cannot build"
        return ""
    inside = os.path.realpath(custom)
    if os.path.commonpath([inside, os.path.realpath(full)]) != inside:
        return (
            f"{where}: outside {CUSTOM}/, and kustomize loads a Component's files from its "
            "own folder alone"
        )
    return ""


def _built(job_dir: Path, references: list[tuple[str, str, yaml.ScalarNode]]) -> list[Problem]:
    """kustomize's verdict on the kustomization that lists the Component (the job folder's,
    or base/ beside overlays), when kustomize is on PATH and it lists it; none otherwise
    (a kustomization that does not list it yet is stale, which check says)."""
    kustomize = find_kustomize()
    base = job_dir / "base"
    target = base if (base / KUSTOMIZATION).is_file() else job_dir
    if kustomize is None or not _lists_component(target / KUSTOMIZATION):
        return []
    try:
        done = subprocess.run(
            [kustomize, "build", str(target)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"kustomize build {target} did not finish: {exc}") from None
    if done.returncode == 0:
        return []
    said = [line for line in done.stderr.splitlines() if line.strip()]
    message = said[-1].removeprefix("Error: ") if said else f"exit {done.returncode}"
    # At the entry the message names, when it names one of the Component's.
    node = next((n for _, path, n in references if f"'{path}'" in message), None)
    at = (node.start_mark.line + 1, node.start_mark.column + 1) if node else (0, 0)
    return [Problem(COMPONENT, f"`kustomize build {target}` fails: {message}", *at)]


def find_kustomize() -> str | None:
    """The kustomize on PATH, if there is one."""
    return shutil.which("kustomize")


def _lists_component(kustomization: Path) -> bool:
    """Whether a kustomization paddlegen generated lists the job's Component."""
    try:
        data = yaml.safe_load(kustomization.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    listed = data.get("components") if isinstance(data, dict) else None
    return isinstance(listed, list) and any(str(c).endswith(CUSTOM) for c in listed)
