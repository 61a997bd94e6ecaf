"""The repository's own .pre-commit-config.yaml: offline, and dogfooding the shipped hooks."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
SHIPPED = {
    hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
}
LOCAL = {hook["id"]: hook for repo in CONFIG["repos"] for hook in repo["hooks"]}


def test_every_hook_is_local_so_nothing_is_cloned():
    assert [repo["repo"] for repo in CONFIG["repos"]] == ["local"]


def test_the_paddlegen_hooks_are_the_shipped_ones():
    dogfooded = {hook_id for hook_id in LOCAL if hook_id in SHIPPED}
    assert dogfooded == {"paddlegen-validate", "paddlegen-check"}
    for hook_id in dogfooded:
        assert LOCAL[hook_id]["entry"] == SHIPPED[hook_id]["entry"], hook_id


def test_the_validate_hook_sees_every_example_spec():
    pattern = re.compile(LOCAL["paddlegen-validate"]["files"])
    specs = [*ROOT.glob("examples/*.yaml"), *ROOT.glob("examples/gitops/jobs/*.yaml")]
    assert len(specs) >= 10
    for spec in specs:
        assert pattern.search(spec.relative_to(ROOT).as_posix()), spec
    assert not pattern.search("examples/gitops/deploy/gitops-mnist/kustomization.yaml")
