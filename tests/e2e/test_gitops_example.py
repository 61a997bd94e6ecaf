"""examples/gitops/, the root of a GitOps repository: its committed output is fresh, and its
ApplicationSet is valid and deploys every rendered job. (Its pre-commit config runs for real in
test_precommit.py.)"""

from __future__ import annotations

import yaml

from paddlegen.cli import cli
from paddlegen.validate.inprocess import validate_in_process
from tests.conftest import EXAMPLES, example_specs
from tests.helpers import GLOBBINGS, generated_paths

GITOPS = EXAMPLES / "gitops"
ARGOCD_FILES = ["applicationset.yaml", "argocd-cm-health.yaml"]
# The command in examples/gitops/README.md that wrote argocd/ (cmp-plugin.yaml deleted: this
# repository commits its output, so Argo CD needs no plugin).
ARGOCD = ["argocd", "--env", "prod", "--repo-url", "https://git.example.com/ml/training-jobs.git"]


def test_committed_output_is_fresh(runner):
    result = runner.invoke(cli, ["check", str(GITOPS / "jobs"), "-o", str(GITOPS / "deploy")])
    assert result.exit_code == 0, result.output
    assert "2 jobs in" in result.stderr and "up to date" in result.stderr


def test_spec_names_do_not_clash_with_other_examples():
    names = [yaml.safe_load(p.read_text())["metadata"]["name"] for p in example_specs()]
    assert len(names) == len(set(names))
    gitops = sorted(p.stem for p in (GITOPS / "jobs").glob("*.yaml"))
    assert gitops == ["gitops-mnist", "gitops-wide-and-deep"]


def test_argocd_files_validate_against_the_crd_schemas():
    files = [(name, (GITOPS / "argocd" / name).read_text()) for name in ARGOCD_FILES]
    assert validate_in_process(files) == []
    assert sorted(p.name for p in (GITOPS / "argocd").iterdir()) == ARGOCD_FILES


def test_argocd_files_are_what_paddlegen_argocd_writes(runner, tmp_path):
    args = [*ARGOCD, "--deploy", str(GITOPS / "deploy"), "-o", str(tmp_path)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    for name in ARGOCD_FILES:
        assert (tmp_path / name).read_text() == (GITOPS / "argocd" / name).read_text(), name


def test_applicationset_deploys_every_job_once():
    appset = yaml.safe_load((GITOPS / "argocd" / "applicationset.yaml").read_text())
    assert appset["apiVersion"] == "argoproj.io/v1alpha1" and appset["kind"] == "ApplicationSet"
    tree = [str(p.relative_to(GITOPS)) for p in (GITOPS / "deploy").rglob("kustomization.yaml")]
    for globbing in GLOBBINGS:
        assert generated_paths(appset, tree, globbing) == [
            "deploy/gitops-mnist/kustomization.yaml",
            "deploy/gitops-wide-and-deep/overlays/prod/kustomization.yaml",
        ], globbing
