"""examples/gitops/, the root of a GitOps repository: its committed output is fresh, and its
ApplicationSet is valid and deploys every rendered job. (Its pre-commit config runs for real in
test_precommit.py.)"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.validate.inprocess import validate_in_process
from tests.conftest import EXAMPLES, ROOT, example_specs
from tests.helpers import GLOBBINGS, generated_paths

GITOPS = EXAMPLES / "gitops"
ARGOCD_FILES = ["applicationset.yaml", "patches/argocd-cm-health.yaml"]
# The command in examples/gitops/README.md that wrote argocd/ (no --sidecar: this repository
# commits its output, so Argo CD needs no plugin).
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
    folder = GITOPS / "argocd"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == (
        ARGOCD_FILES
    )


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


def test_the_example_commits_no_stamp_as_its_readme_says():
    """Stamps change with every commit to paddlegen (its code is in their digest): the example
    leaves them out, and .gitignore keeps a regenerated one out too."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        [git, "ls-files", "examples/gitops"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [p for p in tracked if p.endswith(".paddlegen-stamp")] == []
    for job in ("gitops-mnist", "gitops-wide-and-deep"):
        stamp = f"examples/gitops/deploy/{job}/.paddlegen-stamp"
        assert subprocess.run([git, "check-ignore", "-q", stamp], cwd=ROOT).returncode == 0
    assert "This example leaves the stamps out" in (GITOPS / "README.md").read_text()
