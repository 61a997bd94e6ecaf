"""Every spec in tests/data/specs/invalid/ fails with exactly the messages its snapshot pins
(after a deliberate wording change: `pytest tests/cli/test_invalid_corpus.py
--snapshot-update`, then review the diff)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.conftest import DATA, ROOT
from tests.security.trees import copy_tree, render_good_tree, tree_state

INVALID = sorted((DATA / "specs" / "invalid").glob("*.yaml"))


@pytest.fixture(scope="module")
def previous_render(tmp_path_factory) -> Path:
    """A good render that every failing run must leave byte for byte as it was."""
    out = tmp_path_factory.mktemp("previous") / "deploy"
    render_good_tree(out)
    return out


@pytest.mark.parametrize("spec", INVALID, ids=lambda p: p.stem)
def test_invalid_spec_messages_are_pinned(
    runner, spec: Path, tmp_path, monkeypatch, previous_render, text_snapshot
):
    monkeypatch.chdir(ROOT)
    rel = str(spec.relative_to(ROOT))
    out = tmp_path / "out"
    copy_tree(previous_render, out)
    before = tree_state(out)
    result = runner.invoke(cli, ["render", rel, "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert tree_state(out) == before, "an invalid spec must leave the output untouched"
    assert result.stderr == text_snapshot
    lines = result.stderr.splitlines()
    assert lines and any(": error: " in line for line in lines)
    assert lines[-1] == "paddlegen: nothing written: 1 of 1 spec has errors"
    for line in lines[:-2]:  # every finding: file:line:col: severity: $.field.path: message
        assert line.startswith(f"{rel}:"), line
        assert line.split(":")[1].isdigit() and line.split(":")[2].isdigit(), line
        assert line.split(": ", 2)[2].startswith("$"), line


def test_the_corpus_covers_the_issue_list():
    names = {p.stem for p in INVALID}
    assert {
        "yaml-syntax",
        "empty",
        "several-documents",
        "duplicate-key",
        "python-tag",
        "wrong-types",
        "unknown-keys",
        "bad-enums",
        "bad-quantities",
        "bad-names",
        "name-too-long-for-pods",
        # the issue's list, item by item
        "nul-byte",
        "latin1",
        "utf16",
        "huge-integer",
        "billion-laughs",
        "anchor-expands-huge",
        "recursive-alias",
        "duplicate-key-nested",
        "python-object-apply-block",
        "tag-directive-alias",
        "overflowing-integers",
        "name-path-traversal",
        "name-with-slash",
        "name-upper-case",
        "name-too-long",
        "name-too-long-for-services",
        "host-ports-past-65535",
        "min-available-above-replicas",
        "undefined-volume-dataprep",
        "same-mount-path",
        "duplicate-env-role",
        "unknown-keys-top-level",
        "unknown-keys-volume",
        "unknown-keys-roles-and-settings",
        "wrong-types-root",
        "ignore-unknown-rule",
        "ignore-required-rule",
        "ignore-in-overlay",
    } <= names
    assert len(INVALID) >= 60
