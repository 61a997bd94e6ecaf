"""How `paddlegen plan` prints a merge plan: a line per change, every Application in JSON, a
Markdown table that shows a spec's text as itself."""

from __future__ import annotations

import json

from paddlegen.gitops.merge import Change, MergePlan
from paddlegen.report import plan_json, plan_markdown, plan_text

PLAN = MergePlan(
    "origin/main",
    "deploy",
    [
        Change("a", None, "rerun", "spec changed: spec.image"),
        Change("b", "prod", "delete", "its spec is gone", asked=False),
        Change("c|<x>", None, "create"),
        Change("d", None, "unchanged"),
    ],
)


def test_the_text_lists_what_changes_then_counts_every_application():
    assert plan_text(PLAN) == (
        "rerun   a: spec changed: spec.image\n"
        "delete  b (environment prod): its spec is gone\n"
        "create  c|<x>\n"
        "merging into origin/main: 1 create, 1 rerun, 1 delete, 1 unchanged\n"
    )


def test_json_lists_every_application_unchanged_ones_too():
    targets = json.loads(plan_json(PLAN))["targets"]
    assert [(t["job"], t["action"]) for t in targets] == [
        ("a", "rerun"),
        ("b", "delete"),
        ("c|<x>", "create"),
        ("d", "unchanged"),
    ]
    assert set(targets[0]) == {"job", "environment", "action", "reason"}


def test_markdown_escapes_the_specs_text_and_bolds_what_plan_fails_on():
    rows = plan_markdown(PLAN).splitlines()
    assert rows[0] == "### paddlegen plan: merging into origin/main"
    assert rows[-3:] == [
        "| a |  | rerun | spec changed: spec.image |",
        "| b | prod | **delete** | its spec is gone |",
        r"| c\|\<x\> |  | create |  |",
    ]
    nothing = plan_markdown(MergePlan("HEAD", "deploy", [Change("d", None, "unchanged")]))
    assert "|" not in nothing  # no table when nothing changes
