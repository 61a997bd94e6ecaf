"""What a release reads from the repository agrees with the package: the changelog's newest
version, the install lines (README.md, docs/install.md), the pre-commit `rev:` the docs pin
and the version the wheel gets (paddlegen/__init__.py)."""

from __future__ import annotations

import datetime
import re

import paddlegen
from tests.conftest import ROOT

VERSION = r"\d+\.\d+\.\d+"
# The changelog is for users: what each version offers, not how it was built (git has that).
MAX_CHANGELOG_LINES = 250
# Keep a Changelog's kinds of change; a heading may name what it came with: "Added (Kueue)".
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def headings(level: str) -> list[str]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(rf"^{level} (.+)$", text, flags=re.MULTILINE)


def test_the_changelogs_newest_version_is_the_packages_and_only_it_may_be_unpublished():
    versions = headings("##")
    if versions[:1] == ["Unreleased"]:  # Keep a Changelog: changes not in a version yet
        versions = versions[1:]
    assert versions, "CHANGELOG.md has no version"
    newest, *older = versions
    assert re.fullmatch(rf"{VERSION} \(not yet published\)|{VERSION} - \d{{4}}-\d\d-\d\d", newest)
    assert newest.split()[0] == paddlegen.__version__
    for version in [newest, *older]:
        if " - " in version:  # released ones: a version and its date, a real one
            datetime.date.fromisoformat(version.split(" - ")[1])
    for version in older:
        assert re.fullmatch(rf"{VERSION} - \d{{4}}-\d\d-\d\d", version), version


def test_0_1_0_is_released_on_its_date():
    assert "0.1.0 - 2026-11-29" in headings("##")


def test_the_changelog_stays_short():
    lines = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_CHANGELOG_LINES


def test_the_pre_commit_rev_the_docs_pin_is_this_versions_tag():
    pages = [
        ROOT / "docs" / "gitops.md",
        ROOT / "examples" / "gitops" / ".pre-commit-config.yaml",
        ROOT / "examples" / "gitops" / "README.md",
    ]
    revs = {
        str(page.relative_to(ROOT)): set(re.findall(r"rev: (v[^\s`]+)", page.read_text("utf-8")))
        for page in pages
    }
    assert revs["docs/gitops.md"] and revs["examples/gitops/.pre-commit-config.yaml"]
    assert {page: rev - {f"v{paddlegen.__version__}"} for page, rev in revs.items()} == {
        page: set() for page in revs
    }
    steps = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Releasing")[1]
    assert "git tag -a v" in steps  # the tag the rev names is made by the release


def test_every_change_is_of_a_kind_keep_a_changelog_knows():
    kinds = {heading.split(" (")[0] for heading in headings("###")}
    assert kinds <= KINDS, kinds - KINDS


def test_the_install_lines_name_the_wheel_of_this_version():
    for page in (ROOT / "README.md", ROOT / "docs" / "install.md"):
        text = page.read_text(encoding="utf-8")
        wheels = set(re.findall(rf"paddlegen-({VERSION})-py3-none-any\.whl", text))
        assert wheels == {paddlegen.__version__}, page
