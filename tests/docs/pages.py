"""The documentation's pages and their fenced code blocks, for the tests of tests/docs/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from tests.conftest import ROOT

DOCS = ROOT / "docs"
# ```lang ... ``` at any indentation (blocks inside list items are indented)
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.M | re.S,
)


class Block(NamedTuple):
    page: Path
    line: int  # where the block's first line of content is, 1-based
    lang: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """Every Markdown page of the site, and the README, which links into it."""
    return [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]


def blocks(langs: set[str]) -> Iterator[Block]:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match["lang"] in langs:
                indent = match["indent"]
                body = "".join(
                    line[len(indent) :] if line.startswith(indent) else line
                    for line in match["body"].splitlines(keepends=True)
                )
                line = text.count("\n", 0, match.start()) + 2
                yield Block(page, line, match["lang"], body)
