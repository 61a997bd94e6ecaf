"""The rule registry and what silencing may name: one list of ids, held to the rules' definitions,
the schema and the documentation (docs/reference/rules.md, docs/validation.md)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from paddlegen.errors import InvalidValueError, SpecError
from paddlegen.resources import spec_schema_path
from paddlegen.rules import EVERY_SPEC, REGISTRY, REQUIRED, RULES
from paddlegen.rules.ignores import covers, run_rules
from scripts.generate import schema_text

ROOT = Path(__file__).resolve().parents[2]
RULE_MODULES = [
    *(ROOT / "paddlegen" / "rules").glob("*.py"),
    *(ROOT / "paddlegen" / "workloads").glob("*/rules.py"),
]


def defined_rules() -> list[str]:
    """The id of every ``SpecRule(...)`` the rule modules define."""
    found = []
    for path in RULE_MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "SpecRule":
                rule = node.args[0]
                assert isinstance(rule, ast.Constant), ast.unparse(node)  # a literal: it is known
                found.append(rule.value)
    return found


def test_the_registry_holds_every_rule_defined_once():
    assert sorted(defined_rules()) == sorted(RULES)
    assert len(REGISTRY) == len(set(RULES))
    assert set(REQUIRED) < set(RULES)


def test_what_a_workload_adds_is_in_the_registry():
    from paddlegen.workloads import WORKLOADS

    every_spec = {rule.id for rule in EVERY_SPEC}
    folders = set()
    for name, w in WORKLOADS.items():
        own = w.rules()
        assert set(own.rules) <= set(REGISTRY)
        folders |= set(own.rules)
        # an extension runs with its rule, so it names one the workload's specs get by id
        assert set(own.extends) <= every_spec, name
    # every other rule is every spec's, and none of the workloads' is
    assert set(EVERY_SPEC) == set(REGISTRY) - folders
    assert len(EVERY_SPEC) == len(set(EVERY_SPEC))


def test_the_schema_offers_the_registry():
    # Regenerate with `python -m scripts.generate` after a change of the rules.
    committed = spec_schema_path().read_bytes()
    assert schema_text(committed) == committed
    assert json.loads(committed)["$defs"]["ruleId"]["enum"] == list(RULES)


def test_the_rules_reference_lists_every_rule():
    page = (ROOT / "docs" / "reference" / "rules.md").read_text(encoding="utf-8")
    section = page.split("## Semantic rules", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, re.MULTILINE)
    assert listed == list(RULES)


@pytest.mark.parametrize(
    ("entry", "path", "expected"),
    [
        ("$.spec.env[2].value", "$.spec.env[2].value", True),
        ("$.spec.env", "$.spec.env[2].value", True),
        ("$.spec.env[2]", "$.spec.env[2].value", True),
        ("$.spec", "$.spec.env", True),
        ("$", "$.metadata.name", True),
        ("$.spec.env[2].value", "$.spec.env", False),  # a field does not cover its parent
        ("$.spec.e", "$.spec.env", False),  # nor one whose name it begins
        ("$.spec.env[2]", "$.spec.env[20].value", False),
        ("$.spec.env", "$.overlays.prod.spec.env[0].value", False),
    ],
)
def test_an_entry_covers_its_field_and_everything_under_it(entry, path, expected):
    assert covers(entry, path) is expected


def test_run_rules_are_checked_against_the_registry():
    assert run_rules(["image-tag", "secret-literal", "image-tag"]) == {
        "image-tag",
        "secret-literal",
    }
    with pytest.raises(
        InvalidValueError, match=r"unknown rule 'imagetag' \(did you mean 'image-tag'"
    ):
        run_rules(["imagetag"])
    with pytest.raises(InvalidValueError, match="unknown rule 'schema' \\(rules: job-replicas, "):
        run_rules(["schema"])
    for rule in REQUIRED:
        with pytest.raises(InvalidValueError, match=f"rule '{rule}' cannot be silenced"):
            run_rules([rule])


def test_the_docs_example_silences_what_it_says(tmp_path):
    from paddlegen.pipeline import load

    page = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    example = page.split("## Silencing a rule", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    spec = tmp_path / "ranker.yaml"
    spec.write_text(example)
    assert load.load_valid(spec)[1] == []
    spec.write_text(example.split("ignore:")[0])
    with pytest.raises(SpecError) as raised:
        load.load_valid(spec)
    assert [d.rule for d in raised.value.diagnostics] == ["limits-missing", "secret-literal"]
