"""The README is short and points into the site; CI runs its test command verbatim."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = ROOT / "README.md"
QUICK_START = "pip install . && paddlegen render examples/quickstart.yaml -o deploy/"
TEST_COMMAND = "pip install --require-hashes -r requirements/ci.txt && python3 -m pytest"


def test_the_readme_stays_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move user material to docs/"


def test_the_readme_shows_the_two_commands_and_ci_runs_the_second():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert QUICK_START in lines
    assert TEST_COMMAND in lines
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_every_relative_link_of_the_readme_and_contributing_exists():
    for page in (README, ROOT / "CONTRIBUTING.md", ROOT / "hack" / "README.md"):
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name}: {target}"
