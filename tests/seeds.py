"""The seed documents' code and manifests, extracted as the tests need them."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

# The seeds live next to the repository in shared/ (CI lays out a copy there too).
SEEDS = Path(
    os.environ.get("PADDLEGEN_SEEDS", Path(__file__).resolve().parents[2] / "shared" / "seeds")
)
_FENCE = re.compile(r"^[ \t]*```([^\n]*)\n(.*?)^[ \t]*```", re.S | re.M)
_TOP_KEY = re.compile(r"^(apiVersion|kind|metadata|spec|---)\b")


def seed_text(name: str) -> str:
    path = next(SEEDS.glob(f"{name}_*.txt"), None)
    if path is None:
        message = f"seed {name} not found under {SEEDS}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path.read_text(encoding="utf-8")


def code_blocks(text: str) -> list[str]:
    """Fenced blocks, dedented (seed 002 indents them inside list items)."""
    return [textwrap.dedent(body) for _lang, body in _FENCE.findall(text)]


def manifest_blocks(text: str) -> list[str]:
    """Every Kubernetes manifest shown: fenced blocks with apiVersion and kind, and the
    tab-indented runs of seed 004 (which uses no fences)."""
    blocks = [b for b in code_blocks(text) if "apiVersion:" in b and "kind:" in b]
    current: list[str] | None = None
    for line in [*text.splitlines(), ""]:
        body = line[1:] if line.startswith("\t") else None
        if (
            current is not None
            and body is not None
            and (body.startswith(" ") or _TOP_KEY.match(body))
        ):
            current.append(body)
            continue
        if current is not None:
            blocks.append("\n".join(current) + "\n")
            current = None
        if body is not None and _TOP_KEY.match(body):
            current = [body]
    return blocks
