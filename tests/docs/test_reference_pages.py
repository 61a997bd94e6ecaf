"""The generated reference pages (docs/reference/, scripts/gen_docs.py) cover all of what they
are made from: the schema, the click commands and the rules' texts."""

from __future__ import annotations

import json
import re

import click

from scripts import gen_docs
from scripts.generate import SCHEMA
from tests.conftest import ROOT


def test_the_spec_reference_names_every_field_of_the_schema():
    page = (ROOT / "docs" / "reference" / "spec.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([A-Za-z0-9_.-]+)` \|", page, re.MULTILINE))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert names <= listed, sorted(names - listed)
    assert "activeDeadlineSeconds" in listed


def test_the_cli_reference_names_every_command_and_option():
    from paddlegen.cli import cli

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    ctx = click.Context(cli, info_name="paddlegen", **cli.context_settings)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert f"## `paddlegen {name}`" in page
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts:
                    assert f"`{opt}`" in page, (name, opt)


def test_the_rules_reference_names_every_rule():
    page = (ROOT / "docs" / "reference" / "rules.md").read_text(encoding="utf-8")
    for row in gen_docs.rule_rows():
        assert f"| `{row.id}` |" in page
    for rule in gen_docs.other_rows():
        assert f"| `{rule.id}` |" in page
