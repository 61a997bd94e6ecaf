"""Every rule's cases (tests/data/rules/<id>/): it fires on each bad*.yaml and on no good*.yaml,
a good case being its bad one with the one fix; a finding's severity is one its rule declares.
A rule of no single input file sits in EXEMPT, with where its findings are tested instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlegen.errors import Diagnostic, SpecError
from paddlegen.gitops import kueue_setup
from paddlegen.pipeline.load import validate_document
from paddlegen.report import declared_rules
from paddlegen.spec.loader import parse_spec
from tests.conftest import DATA

CASES = DATA / "rules"
DECLARED = {rule.id: rule for rule in declared_rules()}
_KUEUE_SETUP = {rule.id for rule in kueue_setup.RULES}
# The rules whose findings are not about one spec or KueueSetup file, and where they are tested.
EXEMPT = {
    "job-name": "two spec files naming one job: tests/cli/test_cli.py, tests/render/",
    "kubeconform": "rendered manifests, by a tool: tests/cli/, tests/render/",
    "in-process": "rendered manifests: tests/cli/test_cli.py, tests/cli/test_ci_formats.py",
    "overlay": "an environment's patch on its rendered base: tests/e2e/test_validate_trees.py",
    "server": "an API server's answer: tests/unit/test_validate_server.py",
    "kueue-local-queue": "an API server's LocalQueues: tests/unit/test_validate_server.py",
    "kueue-team": "a spec against a KueueSetup: tests/unit/test_kueue_fit.py",
    "kueue-covered": "a spec against a KueueSetup: tests/unit/test_kueue_fit.py",
    "kueue-quota": "a spec against a KueueSetup: tests/unit/test_kueue_fit.py",
    "stale": "a rendered folder against the specs: tests/cli/ (check, diff)",
    "missing": "a rendered folder against the specs: tests/cli/ (check, diff)",
    "extra": "a rendered folder against the specs: tests/cli/ (check, diff)",
    "unknown": "a rendered folder against the specs: tests/cli/test_custom.py",
    "custom": "a job's custom/ Component: tests/cli/test_custom.py",
    "leftover": "an interrupted render's staging folder: tests/cli/test_leftovers.py",
    "removal": "a write or a merge: tests/cli/test_removals.py, tests/cli/test_plan.py",
    "rerun": "a merge against a git revision: tests/cli/test_plan.py",
    "summary": "a run's last word: tests/cli/test_json_stdout.py, tests/cli/test_ci_formats.py",
    "import-note": "objects import reads: tests/unit/test_import.py",
    "import-lossy": "objects import reads: tests/unit/test_import.py",
    "import-shape": "objects import reads: tests/unit/test_import_shapes.py",
    "sdk-workload": "a Python SDK call: tests/unit/test_sdk.py",
    "input": "the command line's files: tests/cli/test_cli.py",
    "output": "the output folder: tests/cli/, tests/render/",
    "tool": "an external tool: tests/cli/test_ci_formats.py",
    "template": "a template: tests/render/",
    "usage": "the command line: tests/cli/test_first_contact.py",
    "value": "a library call's values: tests/unit/",
    "argument": "a library call's arguments: tests/unit/test_sdk.py",
    "error": "an error without findings: tests/cli/test_cli.py",
    "internal": "a bug: tests/cli/test_cli.py",
}


def findings(rule: str, path: Path) -> list[Diagnostic]:
    """What paddlegen finds in the case file: a KueueSetup's rules, or a spec's (all of them:
    the loader, the schema, the rules and its ignore entries)."""
    try:
        if rule in _KUEUE_SETUP:
            return kueue_setup.load(path)[1]
        return validate_document(parse_spec(path.read_bytes(), str(path)))
    except SpecError as exc:
        return exc.diagnostics


def cases() -> list[tuple[str, Path]]:
    return sorted((p.parent.name, p) for p in CASES.glob("*/*.yaml"))


def test_every_rule_has_cases_or_an_exemption():
    with_cases = {rule for rule, _ in cases()}
    assert set(DECLARED) - with_cases == set(EXEMPT)
    assert with_cases <= set(DECLARED)  # no orphans
    for folder in CASES.iterdir():
        assert sorted(p.name for p in folder.iterdir())[:2] == ["bad.yaml", "good.yaml"], folder


def _severities_declared(found: list[Diagnostic]) -> None:
    for d in found:
        assert d.severity in DECLARED[d.rule].severities, d


@pytest.mark.parametrize(("rule", "path"), cases(), ids=lambda v: getattr(v, "name", v))
def test_a_rule_fires_on_its_bad_cases_alone_with_a_severity_it_declares(rule, path):
    found = findings(rule, path)
    assert (rule in {d.rule for d in found}) is path.name.startswith("bad"), found
    _severities_declared(found)


@pytest.mark.parametrize("path", sorted((DATA / "specs").rglob("*.yaml")), ids=lambda p: p.name)
def test_a_spec_finding_has_a_severity_its_rule_declares(path):
    _severities_declared(findings("", path))
