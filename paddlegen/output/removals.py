"""Removals a write would make of what is deployed, refused unless asked (`--allow-removal`).

An environment's folder (`overlays/<env>/`) is what an Argo CD Application deploys (the
ApplicationSet of `paddlegen argocd` makes one per folder): a render that drops it deletes the
Application, and its resources finalizer the running job. A job's spec still being there, an
environment that vanishes from it is more often a typo (`prod:` -> `prdo:`) than a decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from paddlegen.errors import Diagnostic, Rule, UnsafeMergeError
from paddlegen.output.layout import KUSTOMIZATION, is_generated

REMOVAL = Rule(
    "removal",
    (
        "nothing deployed is removed unasked: a render removes no environment of a job whose "
        "spec is there, a merge deletes no Argo CD Application (`--allow-removal` allows it)"
    ),
    explanation=(
        "A render or `check --fix` would remove an environment's folder (overlays/<env>/) of a "
        "job whose spec is still there, or merging deletes an Argo CD Application (`paddlegen "
        "plan`): its job folder or its environment is gone (a removed spec, a renamed job, an "
        "environment removed from the overlays). Its resources finalizer deletes its objects "
        "with it, a running job among them. `--allow-removal` allows it."
    ),
    severity="error",
)

OVERLAYS = "overlays"


class Planned(Protocol):
    """What the check reads of a job about to be written (``build.Rendered`` is one; the
    pipeline imports this module, which needs nothing of the pipeline)."""

    @property
    def file(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def plan(self) -> dict[str, str]: ...

    @property
    def reused(self) -> object: ...

    @property
    def env(self) -> str | None: ...


def refuse_removals(rendered: Sequence[Planned], out: Path, allowed: bool = False) -> None:
    """UnsafeMergeError (exit 1) naming every environment a write of ``rendered`` into
    ``out`` would remove from a job folder, unless ``allowed``."""
    found = [] if allowed else removed_environments(rendered, out)
    if found:
        raise UnsafeMergeError(f"{len(found)} environment(s) would be removed", found)


def removed_environments(rendered: Sequence[Planned], out: Path) -> list[Diagnostic]:
    """An error per environment folder on disk that the new plan of its job lacks."""
    found = []
    for r in rendered:
        if r.reused:
            continue
        planned = _environments(r.plan)
        gone = sorted(_deployed_environments(out / r.name) - planned)
        found += [_removal(r, out / r.name, env, sorted(planned)) for env in gone]
    return found


def _environments(plan: Iterable[str]) -> set[str]:
    """The environments a job folder's files (relative paths) hold."""
    return {
        parts[1]
        for parts in (rel.split("/") for rel in plan)
        if len(parts) > 2 and parts[0] == OVERLAYS
    }


def _deployed_environments(job_dir: Path) -> set[str]:
    """The environments whose kustomization paddlegen generated in ``job_dir``."""
    overlays = job_dir / OVERLAYS
    if overlays.is_symlink() or not overlays.is_dir():
        return set()
    return {
        p.name
        for p in overlays.iterdir()
        if p.is_dir() and not p.is_symlink() and is_generated(p / KUSTOMIZATION)
    }


def _removal(r: Planned, job_dir: Path, env: str, planned: list[str]) -> Diagnostic:
    from paddlegen.output.owner import spec_document
    from paddlegen.spec.schema import nearest  # only on this error: jsonschema's module

    if r.env:
        why, close = f"--env {r.env} writes the flat layout, without {OVERLAYS}/", ""
    else:
        why = f"the spec has no environment '{env}' now"
        close = nearest(env, [e for e in planned if e not in _deployed_environments(job_dir)])
    field = (OVERLAYS, close) if close else (OVERLAYS,)
    doc = spec_document(r.file)  # a render keeps no documents: positions are looked up now
    at = doc.where(field, key=True) if doc else None
    misspelt = (
        f"'{close}' is new: if it is '{env}' misspelt, name it '{env}' again; " if close else ""
    )
    return Diagnostic(
        r.file,
        at.line if at else 0,
        at.col if at else 0,
        "error",
        "$." + ".".join(field) if doc and field in doc.keys else "",
        f"this would remove {job_dir}/{OVERLAYS}/{env}/ ({why}): under Argo CD its "
        "Application is deleted, and the running job with it",
        REMOVAL.id,
        misspelt + "--allow-removal allows it",
    )
