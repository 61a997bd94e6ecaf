"""paddlegen/rules/help.py: every rule id has its help text, the semantic rules' the rules
reference's (docs/reference/rules.md, generated from the registry by scripts/gen_docs.py)."""

from __future__ import annotations

import re

from paddlegen import errors
from paddlegen.cli import common
from paddlegen.cli import render as render_cli
from paddlegen.gitops import kueue_setup
from paddlegen.rules import REGISTRY, RULES, ignores
from paddlegen.rules.help import HELP, OTHERS
from paddlegen.validate import inprocess, kubeconform, kueue_queues, patched, server
from paddlegen.workloads import import_notes
from tests.conftest import ROOT


def reference_table() -> dict[str, str]:
    page = (ROOT / "docs" / "reference" / "rules.md").read_text(encoding="utf-8")
    section = page.split("## Semantic rules", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([a-z-]+)` \| [^|]+ \| (.+) \|$", section, re.MULTILINE))


def test_the_semantic_rules_say_what_the_rules_reference_says():
    assert reference_table() == {rule.id: rule.summary for rule in REGISTRY}


def test_every_other_rule_id_paddlegen_reports_has_help():
    def subclasses(cls: type) -> list[type]:
        return [cls, *(c for sub in cls.__subclasses__() for c in subclasses(sub))]

    reported = {
        # the loader, the schema and the spec set (spec/loader.py, spec/schema.py, pipeline/load.py)
        "yaml",
        "encoding",
        "schema",
        "job-name",
        ignores.UNUSED,
        ignores.REFUSED,
        *(rule for _severity, rule in import_notes._RULES.values()),
        # manifests
        kubeconform.RULE,
        inprocess.RULE,
        patched.RULE,
        server.RULE,
        kueue_queues.RULE,
        # check, diff and the run's summary
        *render_cli._DRIFT,
        # `paddlegen kueue`'s input
        *kueue_setup.RULES,
        "leftover",
        "custom",  # a job's custom/ folder kustomize cannot use
        common.SUMMARY_RULE,
        # errors without findings (cli/__init__.py)
        *(cls.rule for cls in subclasses(errors.PaddlegenError)),
        "usage",
        "internal",
    }
    assert reported - set(RULES) == set(OTHERS)
    assert set(HELP) == set(RULES) | set(OTHERS)
    assert all(text and not text.endswith(".") for text in HELP.values())
