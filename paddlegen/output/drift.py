"""Drift: how a job directory on disk differs from a fresh render (nothing is written)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paddlegen.errors import Diagnostic, Rule
from paddlegen.output.component import Problem, component_problems
from paddlegen.output.layout import (
    COMPONENT,
    CUSTOM,
    KUSTOMIZATION,
    STAMP,
    Plan,
    is_custom,
    is_owned,
    own_place,
)
from paddlegen.output.writer import existing_files, rm_command
from paddlegen.reading import open_regular, read_text

# The rules of drift findings: a job folder's file that is not what a render writes.
STALE = Rule(
    "stale",
    "a rendered file is what the specs render to (`paddlegen render` rewrites it)",
    explanation=(
        "A rendered file differs from what the specs render to now: the committed output is out of "
        "date. `paddlegen render` rewrites it."
    ),
    severity="error",
)

MISSING = Rule(
    "missing",
    "every file a render writes is there",
    explanation=(
        "A render writes this file and it is not there: the committed output is incomplete."
    ),
    severity="error",
)

EXTRA = Rule(
    "extra",
    "no file that paddlegen generated is left where a render no longer writes one",
    explanation=(
        "paddlegen generated this file, and a render no longer would: it is left over from an "
        "older render."
    ),
    severity="error",
)

UNKNOWN = Rule(
    "unknown",
    (
        "every file in a job folder is one paddlegen generated, or in its `custom/` Component (a "
        "file nothing deploys is reported)"
    ),
    explanation=(
        "A file in a job folder that paddlegen did not generate, and that no kustomization lists, "
        "is deployed by nothing. A job's own objects go in its `custom/` Component."
    ),
    severity="error",
)

CUSTOM_RULE = Rule(
    "custom",
    "a job's `custom/` folder is a kustomize Component kustomize can use",
    explanation=(
        "A job's `custom/` folder is a kustomize Component that the job's kustomization lists. One "
        "kustomize cannot use breaks the job's build. `check` and `validate` build it: every file "
        "it names must be in or below it (reported at its entry), and with kustomize on PATH the "
        "job's kustomization is built too."
    ),
    severity="error",
)

LEFTOVER = Rule(
    "leftover",
    "no staging folder of an interrupted render is left in the output",
    explanation=(
        "A staging folder of an interrupted render is left in the output; the next render removes "
        "it."
    ),
    severity="error",
)

# What each kind of drift says of a file (beside it in text, as its finding's message in the
# other formats).
_MEANINGS = {
    STALE: "differs from what the specs render to",
    MISSING: "a render writes it, and it is not there",
    EXTRA: "paddlegen generated it, and a render no longer would",
    UNKNOWN: "paddlegen did not generate it, and no kustomization lists it: not deployed",
}

_COMPONENT_MAX = 1 << 20  # bytes of custom/kustomization.yaml read to find its kind


@dataclass
class Drift:
    """How a job directory on disk differs from a fresh render."""

    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # generated files the render no longer has
    diff: str = ""
    # A staging directory a killed or interrupted render left (the next render removes it):
    # committed, its files would land in git, its kustomization.yaml in an ApplicationSet.
    leftover: bool = False
    # Files paddlegen did not generate outside custom/: no kustomization lists them, so
    # nothing deploys them (they belong in custom/).
    unknown: list[str] = field(default_factory=list)
    # What keeps custom/ from being deployed: no kustomization.yaml there, one that is no
    # kustomize Component, or one kustomize cannot build (output/component.py).
    custom: list[Problem] = field(default_factory=list)
    # The environment the folder was rendered for alone (`--env`, its stamp says), if it was:
    # a check with another (or none) finds every file different.
    env: str | None = None

    def __bool__(self) -> bool:
        return bool(
            self.stale or self.missing or self.extra or self.leftover or self.unknown or self.custom
        )

    @property
    def fixable(self) -> bool:
        """Whether a render makes the folder what the spec renders to (the files of the
        user's, in `unknown` and `custom`, are theirs to move or fix)."""
        return bool(self.stale or self.missing or self.extra or self.leftover)

    def notes(self, out_dir: str | Path, name: str) -> list[str]:
        """A line per file of job folder ``name`` in ``out_dir`` that differs, as text shows
        them after the diff (``stale: deploy/a/x.yaml``)."""
        folder = Path(out_dir) / name
        if self.leftover:
            return [f"extra: {folder}/"]
        place = own_place(folder / CUSTOM)
        lines = [
            f"{rule.id}: {folder / rel}" + (f" ({said}; {place})" if rule is UNKNOWN else "")
            for rule, said in _MEANINGS.items()
            for rel in getattr(self, rule.id)  # the rule's id is the field's name
        ]
        lines += [
            f"{CUSTOM_RULE.id}: {folder / rel}{f':{line}:{col}' if line else ''} ({why})"
            for rel, why, line, col in self.custom
        ]
        return lines

    def findings(self, out_dir: str | Path, name: str, origin: str = "") -> list[Diagnostic]:
        """A finding per file of job folder ``name`` in ``out_dir`` that differs, from the
        spec file ``origin`` (--format json, github, sarif and junit)."""
        folder = Path(out_dir) / name
        if self.leftover:
            message = (
                "a staging folder an interrupted render left; the next render removes it, "
                "as does: " + rm_command(out_dir, [name])
            )
            return [Diagnostic(f"{folder}/", message=message, rule=LEFTOVER.id)]
        place = own_place(folder / CUSTOM)
        found = [
            Diagnostic(
                str(folder / rel),
                message=said + (f"; {place}" if rule is UNKNOWN else ""),
                rule=rule.id,
                origin=origin,
            )
            for rule, said in _MEANINGS.items()
            for rel in getattr(self, rule.id)
        ]
        found += [
            Diagnostic(
                str(folder / rel), line, col, message=why, rule=CUSTOM_RULE.id, origin=origin
            )
            for rel, why, line, col in self.custom
        ]
        return found


def leftover_notes(drifts: Sequence[tuple[str, Drift]], out_dir: str | Path) -> list[str]:
    """The line text ends a drift's report with when staging folders are left in
    ``out_dir``, naming the command that removes them."""
    leftovers = [name for name, found in drifts if found.leftover]
    if not leftovers:
        return []
    return [
        f"paddlegen: {len(leftovers)} staging folder(s) left in {out_dir} by an interrupted "
        "or killed render; the next render removes them, as does: " + rm_command(out_dir, leftovers)
    ]


def drift_of(out_dir: Path, name: str, plan: Plan) -> Drift:
    """Compare ``plan`` with ``out_dir/name`` without writing anything. For a job that is
    rendered (a ``plan``), files of the user's that nothing deploys are drift too."""
    import difflib

    target = out_dir / name
    old = existing_files(target)
    drift = user_files(old) if plan else Drift()
    chunks: list[str] = []
    # The stamp is a cache, not output: a stale one is rewritten by the next render, not drift.
    for rel in sorted((set(plan) | {p for p, full in old.items() if is_owned(p, full)}) - {STAMP}):
        shown = f"{out_dir.name or out_dir}/{name}/{rel}"
        before = _text_of(old[rel]) if rel in old else ""
        after = plan.get(rel, "")
        if rel not in old:
            drift.missing.append(rel)
        elif rel not in plan:
            drift.extra.append(rel)
        elif before == after:
            continue
        else:
            drift.stale.append(rel)
        chunks.extend(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{shown}" if rel in old else "/dev/null",
                tofile=f"b/{shown}" if rel in plan else "/dev/null",
            )
        )
    drift.diff = "".join(chunks)
    return drift


def _text_of(path: Path) -> str:
    """A file's text for a diff; a symlink is shown, never followed (it could point at a secret)."""
    if path.is_symlink():
        return f"(a symlink to {os.readlink(path)}; paddlegen does not follow it)\n"
    return read_text(path)


def user_files(files: dict[str, Path]) -> Drift:
    """The drift in a job folder's ``files`` (``existing_files``) that a render cannot fix:
    files of the user's that nothing deploys."""
    return Drift(
        unknown=sorted(
            rel
            for rel, full in files.items()
            if rel != STAMP and not is_owned(rel, full) and not is_custom(rel)
        ),
        custom=_custom_problems(files),
    )


def custom_findings(job_dir: Path) -> list[Diagnostic]:
    """The findings on the `custom/` of a rendered job folder as it is (``validate`` of it)."""
    return [
        Diagnostic(str(job_dir / rel), line, col, message=why, rule=CUSTOM_RULE.id)
        for rel, why, line, col in _custom_problems(existing_files(job_dir))
    ]


def _custom_problems(old: dict[str, Path]) -> list[Problem]:
    """Why what is in custom/ would not be deployed, per file; none when it is a Component
    kustomize builds."""
    inside = sorted(rel for rel in old if is_custom(rel))
    if not inside:
        return []
    component = old.get(COMPONENT)
    if component is None:
        why = (
            f"{CUSTOM}/ has no {KUSTOMIZATION}, so nothing in it is deployed: make it a "
            "kustomize Component (kind: Component) that lists this file"
        )
        return [Problem(rel, why) for rel in inside]
    if component.is_symlink():
        why = (
            "a symlink, which paddlegen does not follow: the job's kustomization lists no "
            f"{CUSTOM}/ behind one (make it a regular file)"
        )
        return [Problem(COMPONENT, why)]
    text, kind = _kind_of(component)
    if kind == "Component":
        return component_problems(component.parent.parent, text)
    return [
        Problem(
            COMPONENT,
            f"{kind}: the job's kustomization lists it under components:, where kustomize "
            "takes only a Component (apiVersion: kustomize.config.k8s.io/v1alpha1, "
            "kind: Component)",
        )
    ]


def _kind_of(path: Path) -> tuple[str, str]:
    """A YAML file's text and the kind of its first document, said for a message ("kind
    Kustomization", "not valid YAML", ...)."""
    import yaml

    from paddlegen.yamlio import load_all

    try:
        with open_regular(path) as fh:
            text = fh.read(_COMPONENT_MAX + 1).decode("utf-8")
        if len(text) > _COMPONENT_MAX:
            return "", "larger than 1 MiB"
        docs = load_all(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return "", "not valid YAML"
    kind = docs[0].get("kind") if docs and isinstance(docs[0], dict) else None
    said = kind if kind == "Component" else f"kind {kind}" if isinstance(kind, str) else "no kind"
    return text, said
