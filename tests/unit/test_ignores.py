"""The rule registry and what silencing may name: one list of ids, held to the checks, the
schema and the README."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from paddlegen.errors import InvalidValueError, SpecError
from paddlegen.resources import spec_schema_path
from paddlegen.spec import checks
from paddlegen.spec.checks import REQUIRED, RULES
from paddlegen.spec.ignores import covers, run_rules

ROOT = Path(__file__).resolve().parents[2]


def reported_rules() -> list[str]:
    """The rule argument of every ``ctx.error(...)`` call in checks.py."""
    tree = ast.parse(Path(checks.__file__).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "error"
        ):
            rule = node.args[2]
            assert isinstance(rule, ast.Constant), ast.unparse(node)  # a literal, so it is known
            found.append(rule.value)
    return found


def test_the_registry_holds_exactly_the_rules_the_checks_report():
    assert len(RULES) == len(set(RULES))
    assert set(reported_rules()) == set(RULES)
    assert set(REQUIRED) < set(RULES)


def test_the_schema_offers_the_registry():
    schema = json.loads(spec_schema_path().read_text(encoding="utf-8"))
    assert schema["$defs"]["ruleId"]["enum"] == list(RULES)


def test_the_readme_lists_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Silencing a rule", 1)[1].split("\n## ", 1)[0]
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


def test_the_readmes_example_silences_what_it_says(tmp_path):
    from paddlegen import load

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("## Silencing a rule", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    spec = tmp_path / "ranker.yaml"
    spec.write_text(example)
    assert load.load_valid(spec)[1] == []
    spec.write_text(example.split("ignore:")[0])
    with pytest.raises(SpecError) as raised:
        load.load_valid(spec)
    assert [d.rule for d in raised.value.diagnostics] == ["limits-missing", "secret-literal"]
