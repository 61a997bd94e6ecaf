"""Drift: how a job directory on disk differs from a fresh render (nothing is written)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from paddlegen.output.layout import STAMP, Plan, is_generated
from paddlegen.output.writer import existing_files


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

    def __bool__(self) -> bool:
        return bool(self.stale or self.missing or self.extra or self.leftover)


def drift_of(out_dir: Path, name: str, plan: Plan) -> Drift:
    """Compare ``plan`` with ``out_dir/name`` without writing anything."""
    import difflib

    target = out_dir / name
    old = existing_files(target)
    drift = Drift()
    chunks: list[str] = []
    # The stamp is a cache, not output: a stale one is rewritten by the next render, not drift.
    for rel in sorted((set(plan) | {p for p, full in old.items() if is_generated(full)}) - {STAMP}):
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
    return path.read_text(encoding="utf-8", errors="replace")
