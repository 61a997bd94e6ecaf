"""Every spec in tests/data/specs/invalid/ fails with exactly the messages pinned next to it.

Regenerate the pinned files after a deliberate wording change with
`PADDLEGEN_UPDATE_EXPECTED=1 pytest tests/cli/test_invalid_corpus.py`, then review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.conftest import DATA, ROOT

INVALID = sorted((DATA / "specs" / "invalid").glob("*.yaml"))


@pytest.mark.parametrize("spec", INVALID, ids=lambda p: p.stem)
def test_invalid_spec_messages_are_pinned(runner, spec: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    rel = str(spec.relative_to(ROOT))
    out = tmp_path / "out"
    result = runner.invoke(cli, ["render", rel, "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    assert not out.exists(), "an invalid spec must not write anything"
    expected = spec.with_suffix(".expected")
    if os.environ.get("PADDLEGEN_UPDATE_EXPECTED"):
        expected.write_text(result.stderr, encoding="utf-8")
    assert result.stderr == expected.read_text(encoding="utf-8")
    for line in result.stderr.splitlines()[:-1]:  # every finding is positioned: file:line:col
        assert line.startswith(f"{rel}:"), line
        assert line.split(":")[1].isdigit() and line.split(":")[2].isdigit(), line


def test_the_corpus_covers_the_issue_list():
    names = {p.stem for p in INVALID}
    assert {"yaml-syntax", "empty", "several-documents", "duplicate-key", "python-tag",
            "wrong-types", "unknown-keys", "bad-enums", "bad-quantities", "bad-names",
            "name-too-long-for-pods"} <= names
