"""What paddlegen's messages, help and comments point a reader to exists: every
`docs/PAGE.md#anchor` names a page and one of its headings, and every README section named
(`README "Section"`) is a heading of the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.gen_docs import slug
from tests.conftest import ROOT
from tests.docs.pages import FENCE

DOC_LINK = re.compile(r"(?<![\w/.-])(docs/[\w/.-]+?\.md)(?:#([\w-]+))?")
README_SECTION = re.compile(r"""README(?:'s)?,? ["']([^"']+)["']|["']([^"']+)["'] in the README""")
SOURCES = sorted(
    p
    for p in [*(ROOT / "paddlegen").rglob("*.py"), *(ROOT / "templates").rglob("*.j2")]
    if p.name != "schema_compiled.py"
)


def headings(page: Path) -> list[str]:
    """The page's headings, outside its code blocks."""
    text = FENCE.sub("", page.read_text("utf-8"))
    return [m[1].strip() for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)]


def references() -> list[tuple[str, str, str | None]]:
    """(where, page, anchor or None) of every docs link in the sources."""
    found = []
    for source in SOURCES:
        for i, line in enumerate(source.read_text("utf-8").splitlines(), 1):
            for match in DOC_LINK.finditer(line):
                found.append((f"{source.relative_to(ROOT)}:{i}", match[1], match[2]))
    return found


REFERENCES = references()


def test_the_sources_point_into_the_docs():
    assert len(REFERENCES) > 5
    assert any(anchor for _, _, anchor in REFERENCES)


@pytest.mark.parametrize(
    ("where", "page", "anchor"), REFERENCES, ids=[where for where, _, _ in REFERENCES]
)
def test_a_docs_link_names_a_page_and_one_of_its_headings(where, page, anchor):
    path = ROOT / page
    assert path.is_file(), f"{where}: no page {page}"
    if anchor:
        anchors = {slug(h) for h in headings(path)}
        assert anchor in anchors, f"{where}: {page} has no heading #{anchor}"


def test_the_ignore_options_help_names_where_the_rules_are():
    from click.testing import CliRunner

    from paddlegen.cli import cli

    text = CliRunner().invoke(cli, ["check", "--help"], terminal_width=400).output
    (ignore,) = [line for line in text.splitlines() if "--ignore" in line]
    links = DOC_LINK.findall(" ".join(text.split()))
    assert "docs/validation.md" in ignore and ("docs/validation.md", "silencing-a-rule") in links


def test_a_readme_section_named_is_a_heading_of_the_readme():
    readme = set(headings(ROOT / "README.md"))
    for source in SOURCES:
        for match in README_SECTION.finditer(source.read_text("utf-8")):
            section = match[1] or match[2]
            assert section in readme, f"{source.relative_to(ROOT)}: README has no {section!r}"
