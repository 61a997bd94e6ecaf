"""Schemas beyond paddlegen's own: kubeconform's -schema-location templates and
-ignore-missing-schemas, read the same way by kubeconform and the in-process backend."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from paddlegen.errors import InvalidValueError, ToolError

# kubeconform v0.7.0 pkg/registry/registry.go:46-60: the variables a location may use.
VARIABLES = (
    "NormalizedKubernetesVersion",
    "StrictSuffix",
    "ResourceKind",
    "ResourceAPIVersion",
    "Group",
    "KindSuffix",
)
# registry.go:72-76: a location not ending in "json" is a folder laid out like kubeconform's
# schema repository ("default" names that repository, online).
_FOLDER_LAYOUT = (
    "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}"
    "/{{ .ResourceKind }}{{ .KindSuffix }}.json"
)
_ACTION = re.compile(r"{{(.*?)}}")
_VARIABLE = re.compile(r"^-?\s*\.(\w+)\s*-?$")


@dataclass(frozen=True)
class ExtraSchemas:
    """Schema locations tried after paddlegen's own (so its kinds keep its schemas), and
    whether an object no location has a schema for passes unchecked instead of failing."""

    locations: tuple[str, ...] = ()
    ignore_missing: bool = False

    def __post_init__(self) -> None:
        for location in self.locations:
            check_template(location)

    def kubeconform_args(self) -> list[str]:
        args = [arg for location in self.locations for arg in ("-schema-location", location)]
        return args + (["-ignore-missing-schemas"] if self.ignore_missing else [])

    def schema(self, api_version: str, kind: str, kubernetes_version: str) -> Any:
        """The first schema a location has for the kind, as kubeconform picks it; None if none."""
        for location in self.locations:
            if is_online(location):
                raise ToolError(
                    f"schema location {location!r} is online: the in-process backend reads "
                    "local schema files only; install kubeconform, or download the schemas "
                    "and name their local path"
                )
            path = Path(expand(location, api_version, kind, kubernetes_version))
            if path.is_file():
                return _load(path)
        return None


NO_EXTRA = ExtraSchemas()


def is_online(location: str) -> bool:
    # registry.go:69-71 and 93: "default" and every location starting with http are fetched.
    return location == "default" or location.startswith("http")


def check_template(location: str) -> None:
    """InvalidValueError when the location uses anything but kubeconform's variables (kubeconform
    refuses a template it cannot execute; only plain variables are supported here)."""
    for action in _ACTION.findall(location):
        if _variable(action) is None:
            raise InvalidValueError(
                f"{{{{{action}}}}} in {location!r} is not one of kubeconform's variables: "
                + ", ".join(f"{{{{ .{v} }}}}" for v in VARIABLES)
            )


def expand(location: str, api_version: str, kind: str, kubernetes_version: str) -> str:
    """The file a location names for a kind, as kubeconform v0.7.0 computes it
    (pkg/registry/registry.go:22-67), for a strict run as paddlegen's always are."""
    if not location.endswith("json"):
        location += _FOLDER_LAYOUT
    group_parts = api_version.split("/")
    kind_suffix = "-" + group_parts[0].split(".")[0].lower()
    if len(group_parts) > 1:
        kind_suffix += "-" + group_parts[1].lower()
    values = {
        "NormalizedKubernetesVersion": "v" + kubernetes_version,
        "StrictSuffix": "-strict",
        "ResourceKind": kind.lower(),
        "ResourceAPIVersion": group_parts[-1],
        "Group": group_parts[0],
        "KindSuffix": kind_suffix,
    }
    return _ACTION.sub(lambda m: values[_variable(m.group(1)) or ""], location)


def _variable(action: str) -> str | None:
    """The variable ``{{ .Name }}`` names (Go's trim markers allowed), None if another action."""
    match = _VARIABLE.match(action.strip())
    return match.group(1) if match and match.group(1) in VARIABLES else None


@cache
def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ToolError(f"cannot read schema {path}: {exc}") from None
