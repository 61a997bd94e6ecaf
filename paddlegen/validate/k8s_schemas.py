"""Kubernetes JSON schemas from the kubernetes-validate package, for kubeconform and jsonschema."""

from __future__ import annotations

import importlib.util
import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paddlegen.errors import ToolError

if TYPE_CHECKING:  # referencing comes with jsonschema; import it only when validating in process
    from referencing import Registry

# Newest version kubernetes-validate 1.37 ships. kubeconform only substitutes the version into
# schema-location templates, and ours name the exported folder directly, so it handles any.
DEFAULT_KUBERNETES_VERSION = "1.37.0"

# kubeconform's name for a kind's schema file: job-batch-v1.json, configmap-v1.json, ...
KUBECONFORM_FILE_TEMPLATE = "{{.ResourceKind}}{{.KindSuffix}}.json"

DEFINITIONS = "_definitions.json"
# Every $ref in the package is absolute against the $id https://kubernetes.io/api/...
_ABSOLUTE_REF = "/api/" + DEFINITIONS + "#"
_GVK = "x-kubernetes-group-version-kind"
DEFINITIONS_URI = "https://kubernetes.io/api/" + DEFINITIONS
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
_SHIPPED = re.compile(r"^v(\d+\.\d+\.\d+)-local-strict$")


def _package_schemas() -> Path:
    # find_spec locates the package without importing it (and its jsonschema import).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ToolError(
            "the kubernetes-validate package is not installed; "
            "it ships the Kubernetes schemas: pip install kubernetes-validate"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def available_versions() -> list[str]:
    """Kubernetes versions with strict schemas shipped, oldest first (``1.25.0``, ...)."""
    found = (_SHIPPED.match(p.name) for p in _package_schemas().iterdir())
    return sorted((m.group(1) for m in found if m), key=lambda v: tuple(map(int, v.split("."))))


def resolve_version(version: str) -> str:
    """``1.30``, ``v1.30.4`` -> ``1.30.0``: the package ships one schema set per minor release."""
    match = _VERSION.match(version.strip())
    shipped = available_versions()
    wanted = f"{match.group(1)}.{match.group(2)}.0" if match else version
    if wanted not in shipped:
        raise ToolError(
            f"no Kubernetes schemas for version {version!r}; "
            f"kubernetes-validate ships {shipped[0]} to {shipped[-1]}"
        )
    return wanted


def strict_dir(version: str = DEFAULT_KUBERNETES_VERSION) -> Path:
    return _package_schemas() / f"v{resolve_version(version)}-local-strict"


def schema_file_name(api_version: str, kind: str) -> str:
    """kubeconform's file name for a kind: ``batch/v1`` + ``Job`` -> ``job-batch-v1.json``."""
    group, _, version = api_version.rpartition("/")
    suffix = f"-{group.split('.')[0]}-{version}" if group else f"-{version}"
    return f"{kind.lower()}{suffix.lower()}.json"


def _exported_text(name: str, schema: dict[str, Any]) -> str:
    """One schema without its https $id and with its refs pointing at the sibling definitions.

    Without $id kubeconform resolves relative refs against the schema's own file; with it the refs
    would name https://kubernetes.io/... and kubeconform would try to download them.
    """
    schema = {key: value for key, value in schema.items() if key != "$id"}
    # Inside _definitions.json the refs become local; elsewhere they name the sibling file.
    target = "" if name == DEFINITIONS else DEFINITIONS
    # Matching the key too keeps a description that merely quotes the path untouched.
    text = json.dumps(schema, sort_keys=True)
    return text.replace(f'"$ref": "{_ABSOLUTE_REF}', f'"$ref": "{target}#') + "\n"


def export(out_dir: Path, version: str = DEFAULT_KUBERNETES_VERSION) -> Path:
    """Write the strict schemas of one Kubernetes version so kubeconform can use them from disk.

    Only the definitions and the files of real API kinds (those naming a group-version-kind) are
    written: kubeconform looks schemas up by a manifest's kind, and skipping the ~660 files of
    nested types makes the export several times faster.
    """
    source = strict_dir(version)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        schema = json.loads(path.read_bytes())
        if path.name == DEFINITIONS or _GVK in schema:
            text = _exported_text(path.name, schema)
            (out_dir / path.name).write_text(text, encoding="utf-8", newline="\n")
    return out_dir


@lru_cache(maxsize=4)
def registry(version: str = DEFAULT_KUBERNETES_VERSION) -> Registry:
    """A `referencing` registry that serves the original absolute ref target from disk."""
    from referencing import Registry, Resource

    definitions = json.loads((strict_dir(version) / DEFINITIONS).read_bytes())
    resource: Resource[Any] = Resource.from_contents(definitions)
    found: Registry[Any] = Registry().with_resource(DEFINITIONS_URI, resource)
    return found


@cache
def kind_schema(api_version: str, kind: str, version: str = DEFAULT_KUBERNETES_VERSION) -> Any:
    """The original strict schema for one kind, or None when this version has no such kind.

    Files of nested types (affinity-v1.json, ...) do not count, as they are not exported either.
    """
    path = strict_dir(version) / schema_file_name(api_version, kind)
    schema = json.loads(path.read_bytes()) if path.is_file() else {}
    return schema if _GVK in schema else None
