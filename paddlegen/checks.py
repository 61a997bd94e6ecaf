"""Semantic rules JSON Schema cannot express; each has a rule id and points at a position."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from paddlegen.errors import Diagnostic
from paddlegen.loader import Document, FieldPath, format_path
from paddlegen.model import ROLE_NAMES, VOLUME_SOURCES
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SIZED_SOURCES = ("nfs", "efs", "cephfs", "dynamic")


class _Ctx:
    """What a check sees: the document, its spec section and the effective workload."""

    def __init__(self, doc: Document, workload: str | None) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.spec: dict[str, Any] = doc.data.get("spec", {})
        self.workload = workload or self.spec.get("workload", DEFAULT_WORKLOAD)

    def error(self, path: FieldPath, message: str, rule: str, hint: str = "", *,
              key: bool = False, severity: str = "error") -> Diagnostic:
        pos = self.doc.where(path, key=key)
        return Diagnostic(self.doc.file, pos.line, pos.col, severity, format_path(path),
                          message, rule, hint)

    def roles(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for role in ROLE_NAMES:
            if role in self.spec:
                yield role, self.spec[role]


Check = Callable[[_Ctx], Iterator[Diagnostic]]


def _workload_ready(ctx: _Ctx) -> Iterator[Diagnostic]:
    if WORKLOADS[ctx.workload].folder is None:
        path = ("spec", "workload") if "workload" in ctx.spec else ("spec",)
        ready = ", ".join(name for name, w in WORKLOADS.items() if w.folder)
        yield ctx.error(path, f"workload '{ctx.workload}' is not implemented yet",
                        "workload-implemented", f"implemented: {ready}")


def _single_node_job(ctx: _Ctx) -> Iterator[Diagnostic]:
    if ctx.workload != "job":
        return
    hint = "use workload 'distributed-job' or 'paddlejob' for several nodes"
    for role, body in ctx.roles():
        if role != "worker":
            yield ctx.error(("spec", role), f"workload 'job' has no '{role}' role", "job-replicas",
                            hint, key=True)
        elif body.get("replicas", 1) > 1:
            yield ctx.error(("spec", role, "replicas"),
                            f"workload 'job' runs exactly one pod, not {body['replicas']}",
                            "job-replicas", hint)


def _image(ctx: _Ctx) -> Iterator[Diagnostic]:
    if "image" in ctx.spec:
        return
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    missing = [role for role, body in roles.items() if "image" not in body]
    if missing:
        yield ctx.error(("spec",), "no image: set spec.image, or an image on every role "
                        f"(missing on: {', '.join(missing)})", "image-required", key=True)


def _derived_names(ctx: _Ctx) -> Iterator[Diagnostic]:
    name = ctx.data["metadata"]["name"]
    names = WORKLOADS[ctx.workload].derived_names(name, ctx.spec)
    if "dataPrep" in ctx.spec:
        names.append(f"{name}-data")
    for derived in names:
        if len(derived) > 63 or not _DNS1035.match(derived):
            yield ctx.error(("metadata", "name"),
                            f"'{name}' is too long for workload '{ctx.workload}': the derived "
                            f"name '{derived}' has {len(derived)} characters, more than 63",
                            "name-length", f"shorten the name by {len(derived) - 63} characters")
            return


def _volumes(ctx: _Ctx) -> Iterator[Diagnostic]:
    names: dict[str, int] = {}
    mounts: dict[str, int] = {}
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        here: FieldPath = ("spec", "volumes", i)
        sources = [s for s in VOLUME_SOURCES if s in volume]
        if len(sources) != 1:
            found = ", ".join(sources) or "none"
            yield ctx.error(here, f"a volume needs exactly one source, found {found}",
                            "volume-source", "one of: " + ", ".join(VOLUME_SOURCES))
        elif sources[0] in _SIZED_SOURCES and "capacity" not in volume:
            yield ctx.error(here, f"a '{sources[0]}' volume needs a capacity",
                            "volume-capacity", "for example capacity: 10Gi")
        for key, seen, what in (("name", names, "name"), ("mountPath", mounts, "mountPath")):
            value = volume[key]
            if value in seen:
                yield ctx.error((*here, key), f"volume {what} '{value}' is already used by "
                                f"spec.volumes[{seen[value]}]", "volume-unique")
            seen.setdefault(value, i)
    for section in ("distributed", "dataPrep"):
        ref = ctx.spec.get(section, {}).get("volume")
        if ref is not None and ref not in names:
            yield ctx.error(("spec", section, "volume"), f"no volume named '{ref}' in spec.volumes",
                            "volume-reference",
                            "defined: " + (", ".join(names) or "none"))


def _env(ctx: _Ctx) -> Iterator[Diagnostic]:
    lists: list[FieldPath] = [("spec", "env")]
    lists += [("spec", role, "env") for role, _ in ctx.roles()]
    for base in lists:
        entries = ctx.spec.get(base[1], {}) if len(base) == 3 else ctx.spec
        seen: dict[str, int] = {}
        for i, entry in enumerate(entries.get("env", [])):
            name = entry["name"]
            if name in seen:
                yield ctx.error((*base, i, "name"), f"env '{name}' is already set at "
                                f"{format_path((*base, seen[name]))}", "env-unique")
            seen.setdefault(name, i)
            if "value" in entry and "valueFrom" in entry:
                yield ctx.error((*base, i), f"env '{name}' sets both value and valueFrom",
                                "env-value")


def _min_available(ctx: _Ctx) -> Iterator[Diagnostic]:
    wanted = ctx.spec.get("scheduling", {}).get("minAvailable")
    if wanted is None:
        return
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    total = sum(body.get("replicas", 1) for body in roles.values())
    if wanted > total:
        yield ctx.error(("spec", "scheduling", "minAvailable"),
                        f"minAvailable {wanted} is more than the job's {total} "
                        f"pod{'s' if total != 1 else ''}",
                        "min-available", "the job could never be scheduled")


CHECKS: tuple[Check, ...] = (
    _workload_ready,
    _single_node_job,
    _image,
    _derived_names,
    _volumes,
    _env,
    _min_available,
)


def semantic_diagnostics(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Run every check on a spec that already passed the schema."""
    ctx = _Ctx(doc, workload)
    return sorted(d for check in CHECKS for d in check(ctx))
