"""A rule and what its check sees, kept in spec so that workloads can define rules too."""

# Not in paddlegen.rules: that package (the runner, the rules every spec gets) imports
# paddlegen.workloads for each workload's own rules, so the types those are made of live where
# a workload can import them without a cycle; a rule reads a spec, so with the spec.

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

from paddlegen.errors import Diagnostic, Rule
from paddlegen.spec.loader import Document, FieldPath, format_path
from paddlegen.spec.model import (
    CONTAINER_LISTS,
    ROLE_NAMES,
    Owner,
    accelerator,
    replicas,
    restarts,
    role_value,
)
from paddlegen.spec.record import record

T = TypeVar("T")


class Finding(NamedTuple):
    """What a check found; its rule gives the id, and the severity unless the finding does."""

    path: FieldPath
    message: str
    hint: str
    key: bool
    severity: str | None


class Entry(Owner, Protocol):
    """What the rules in a workload's folder ask of the spec's workload's registry entry
    (workloads/base.py ``Workload``): they cannot import the registry, whose entries name
    them (``Workload.rules``)."""

    @property
    def launcher(self) -> Mapping[str, str]: ...

    @property
    def run_keys(self) -> tuple[str, ...]: ...

    @property
    def peer_names(self) -> str: ...


class Context:
    """What a check sees: the document, its spec section and the effective workload (its name,
    and its registry ``entry``)."""

    def __init__(self, doc: Document, entry: Entry, own: WorkloadRules) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.spec: dict[str, Any] = doc.data.get("spec", {})
        self.workload = entry.name
        self.entry = entry
        self.own = own  # what the workload's folder adds to the rules
        self._roles = [(role, self.spec[role]) for role in ROLE_NAMES if role in self.spec]
        self._walks: dict[Callable[[Context], Iterable[Any]], list[Any]] = {}

    def once(self, walk: Callable[[Context], Iterable[T]]) -> list[T]:
        """What ``walk`` finds in this document, walked once however many checks ask (every
        check runs on every spec: a walk each repeats is paid by every render)."""
        found = self._walks.get(walk)
        if found is None:
            found = self._walks[walk] = list(walk(self))
        return found

    def finding(
        self,
        path: FieldPath,
        message: str,
        hint: str = "",
        *,
        key: bool = False,
        severity: str | None = None,
    ) -> Finding:
        return Finding(path, message, hint, key, severity)

    def diagnostic(self, rule: SpecRule, found: Finding) -> Diagnostic:
        pos = self.doc.where(found.path, key=found.key)
        return Diagnostic(
            self.doc.file,
            pos.line,
            pos.col,
            found.severity or rule.severity,
            format_path(found.path),
            found.message,
            rule.id,
            found.hint,
        )

    def roles(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """The roles the spec gives, in ROLE_NAMES order, each with its section."""
        return iter(self._roles)

    # The fields checks read with their defaults, each read here alone.

    @property
    def accelerator(self) -> str:
        """The resource ``gpus`` counts: ``spec.accelerator``, NVIDIA's GPU unless given."""
        return accelerator(self.spec)

    @property
    def kueue(self) -> dict[str, Any] | None:
        """``scheduling.kueue``, the queue the job waits in; None when it is not queued."""
        kueue: dict[str, Any] | None = self.spec.get("scheduling", {}).get("kueue")
        return kueue

    @property
    def restarts(self) -> int:
        """``run.restarts``: how often the group of ranks is restarted, never unless given."""
        return restarts(self.spec)


Check = Callable[[Context], Iterator[Finding]]


# Not a ``record``: it extends ``Rule``, frozen at run time too (no dataclass extends a frozen
# one but a frozen one). Compared by identity, printed as objects, as rules are.
@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class SpecRule(Rule):
    """A semantic rule: a ``Rule`` whose findings its check finds in a spec, and that
    ``ignore`` may silence unless it guards what no job can be built without."""

    silenceable: bool
    check: Check


@record
class WorkloadRules:
    """What a workload adds to the rules (``Workload.rules``): the rules that check only its
    specs, more findings for rules every spec gets (by rule id), and the ports its training
    container has (which no sidecar may take)."""

    rules: tuple[SpecRule, ...] = ()
    extends: Mapping[str, Check] = field(default_factory=dict)
    training_ports: Callable[[Context], dict[tuple[int, str], str]] | None = None


def mount_point(path: str) -> str:
    """The directory a container path names: '/data/', '/data/.' and '//data' are all '/data'.

    Lexical, as the API server cannot know the image's symlinks; Linux reads a leading '//' as
    '/', which posixpath.normpath keeps (POSIX leaves it implementation-defined).
    """
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def gpus_given(body: Mapping[str, Any]) -> int:
    """The ``gpus`` a role's section (or the spec's) gives, none unless given."""
    return int(body.get("gpus", 0))


def role_resources(ctx: Context, body: dict[str, Any]) -> dict[str, Any]:
    """The ``resources`` of each pod of a role: its own, else the spec's, none unless given."""
    resources: dict[str, Any] = role_value(ctx.spec, body, "resources", {})
    return resources


def role_gpus(ctx: Context, body: dict[str, Any]) -> int:
    """The accelerators each pod of a role asks for: its own ``gpus``, else the spec's."""
    return gpus_given(body if "gpus" in body else ctx.spec)


def worker_replicas(ctx: Context) -> int:
    return replicas(ctx.spec.get("worker", {}))


def pod_count(ctx: Context) -> int:
    """The job's pods: every role's replicas (a spec without roles has one worker)."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    return sum(replicas(body) for body in roles.values())


def container_places(ctx: Context, key: str) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """Where the spec sets a container field ``key``: spec-wide and per role, as written, and
    in each init container and sidecar."""
    if key in ctx.spec:
        yield ("spec",), ctx.spec
    for role, body in ctx.roles():
        if key in body:
            yield ("spec", role), body
    for place, container in ctx.once(init_containers):
        if key in container:
            yield place, container


def init_containers(ctx: Context) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """Every init container and sidecar the spec gives, spec-wide and per role, with its place."""
    for base, body in [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]:
        for key in CONTAINER_LISTS:
            for i, container in enumerate(body.get(key, [])):
                yield (*base, key, i), container


Given = dict[str, tuple[FieldPath, Any]]  # pod setting -> where its value is given, and the value


def pod_settings(ctx: Context, keys: tuple[str, ...]) -> Iterator[tuple[str, Given]]:
    """Each kind of pod the spec makes, every role's (a spec without roles has one worker)
    and, as "data", the data Job's, with the settings among ``keys`` it gets and where each is
    given: the role's own, else the spec-wide one (the data Job takes only those). Nothing
    when the spec sets none of them."""
    roles = dict(ctx.roles())
    if not any(key in body for body in (ctx.spec, *roles.values()) for key in keys):
        return
    spec_wide: Given = {key: (("spec", key), ctx.spec[key]) for key in keys if key in ctx.spec}
    roles.setdefault("worker", {})
    for role, body in roles.items():
        own: Given = {key: (("spec", role, key), body[key]) for key in keys if key in body}
        yield role, {**spec_wide, **own}
    if "dataPrep" in ctx.spec:
        yield "data", spec_wide
