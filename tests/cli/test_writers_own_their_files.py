"""Every writing command writes only its own files: aimed at another command's output it
refuses (exit 2, naming the folder, its owner and the way out) and nothing on disk changes;
aimed at its own or an empty folder it writes what it should and nothing else. Checked over
a repository holding every command's output and the user's files (one inside a job folder,
0700 empty folders), by the sha256 and mode of everything in it."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from paddlegen.cli import cli
from paddlegen.errors import OutputError, SpecError
from tests.builders import job_spec
from tests.conftest import ROOT
from tests.helpers import invoked

SETUP = str(ROOT / "examples" / "gitops" / "platform" / "kueue.yaml")
ARGOCD = ["argocd", "--repo-url", "https://git.example.com/ml/jobs.git", "--dest-namespace", "ml"]
OVERLAYS = "overlays:\n  prod: {metadata: {namespace: ml-prod}}\n"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A repository: specs, every command's output, and files of the user's among them."""
    from click.testing import CliRunner

    root = tmp_path_factory.mktemp("repo")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        os.makedirs("jobs")
        Path("jobs/a.yaml").write_text(job_spec("a"))
        Path("jobs/b.yaml").write_text(job_spec("b") + OVERLAYS)
        runner = CliRunner()
        invoked(runner, "render", "jobs", "-o", "deploy")
        invoked(runner, *ARGOCD, "-o", "argocd")
        invoked(runner, "kueue", SETUP, "-o", "kueue")
        invoked(runner, "schemas", "export", "schemas")
        for folder in ("deploy", "argocd", "kueue", "schemas", "."):
            Path(folder, "NOTES.md").write_text(f"the user's notes in {folder}\n")
            os.makedirs(Path(folder, "private"))
            os.chmod(Path(folder, "private"), 0o700)
        Path("deploy/a/NOTES.md").write_text("the user's, inside a job folder\n")
        os.makedirs(".git/refs/tags")  # a repository's empty folders
        os.symlink("moved-away.yaml", "old.yaml")  # a symlink to nothing is a file there too
        os.chmod("jobs", 0o700)
    finally:
        os.chdir(cwd)
    return root


@pytest.fixture
def repo(template, tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)  # modes of files and folders kept
    monkeypatch.chdir(root)
    return root


def state(root: Path) -> dict[str, tuple[str, int]]:
    """Everything below ``root``: each file's sha256, each folder, each link, with its mode."""
    found = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(top, name)
            info = path.lstat()
            if path.is_symlink():
                what = "-> " + os.readlink(path)
            elif path.is_dir():
                what = "folder"
            else:
                what = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = (what, info.st_mode)
    return found


def changed(before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]]) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


# ---- aimed at another command's output: refused, nothing changes ----------------------------

REFUSED = {
    "render into argocd's": (["render", "jobs", "-o", "argocd"], "argocd holds Argo CD files"),
    "render into kueue's": (["render", "jobs", "-o", "kueue"], "kueue holds Kueue objects"),
    "render into schemas'": (["render", "jobs", "-o", "schemas"], "schemas holds schemas"),
    "render into a job": (["render", "jobs", "-o", "deploy/a"], "is a rendered job's folder"),
    "check --fix into argocd's": (
        ["check", "jobs", "-o", "argocd", "--fix"],
        "argocd holds Argo CD files",
    ),
    "argocd into deploy": ([*ARGOCD, "-o", "deploy"], "deploy holds rendered jobs (deploy/a)"),
    "argocd into the root": ([*ARGOCD, "-o", "."], "holds"),
    "argocd into kueue's": ([*ARGOCD, "-o", "kueue"], "kueue holds Kueue objects"),
    "kueue into deploy": (["kueue", SETUP, "-o", "deploy"], "deploy holds rendered jobs"),
    "kueue into argocd's": (["kueue", SETUP, "-o", "argocd"], "argocd holds Argo CD files"),
    "kueue into the root": (["kueue", SETUP, "-o", "."], "holds"),
    "schemas export into deploy": (["schemas", "export", "deploy"], "deploy holds rendered"),
    "schemas export into the root": (["schemas", "export", "."], "holds"),
    "init over a spec": (
        ["init", "jobs/a.yaml", "--no-input", "--image", "img:9"],
        "jobs/a.yaml: already exists (use --force to replace it)",
    ),
    "init over a dangling symlink": (
        ["init", "old.yaml", "--no-input", "--image", "img:9"],
        "old.yaml: already exists (use --force to replace it)",
    ),
    "import over a spec": (
        ["import", "deploy/b/base/batch_v1_job_b.yaml", "-o", "jobs/a.yaml"],
        "jobs/a.yaml: already exists (use --force to replace it)",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_command_aimed_at_another_commands_output_changes_nothing(runner, repo, case):
    args, said = REFUSED[case]
    before = state(repo)
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    if args[0] in ("render", "check", "argocd", "kueue", "schemas"):
        assert "the output of `paddlegen " in result.stderr or "render into" in result.stderr
        assert "give it a folder of its own" in result.stderr or "render into" in result.stderr
    assert state(repo) == before


@pytest.mark.parametrize("folder", ["argocd", "kueue", "deploy/a"])
def test_the_sdk_aimed_at_another_commands_output_changes_nothing(repo, folder):
    from paddlegen.sdk import PaddleJob

    before = state(repo)
    job = PaddleJob(job_name="sdk", entry_point="python train.py", runtime_image="img:1")
    with pytest.raises(OutputError, match="refusing to write|is a rendered job's folder"):
        job.render(folder)
    assert state(repo) == before


# ---- aimed at its own or an empty folder: writes what it should, and only that ------------


# command, a file it must change, and where what it changes may be (the user's NOTES.md never)
POSITIVE = {
    "render": (["render", "jobs", "-o", "deploy"], "deploy/a/batch_v1_job_a.yaml", "deploy/a/"),
    "check --fix": (
        ["check", "jobs", "-o", "deploy", "--fix"],
        "deploy/a/batch_v1_job_a.yaml",
        "deploy/a/",
    ),
    "argocd": (
        [*ARGOCD, "--mode", "applications", "-o", "argocd"],
        "argocd/applications/a.yaml",
        ("argocd/applicationset.yaml", "argocd/applications"),
    ),
    "kueue": (
        ["kueue", SETUP, "-o", "platform/kueue"],
        "platform/kueue/kustomization.yaml",
        "platform",
    ),
    "schemas export": (
        ["schemas", "export", "more-schemas"],
        "more-schemas/trainingjob.v1.schema.json",
        "more-schemas",
    ),
    "init": (
        ["init", "jobs/c.yaml", "--no-input", "--image", "img:9"],
        "jobs/c.yaml",
        "jobs/c.yaml",
    ),
    "init --force": (
        ["init", "jobs/a.yaml", "--no-input", "--image", "img:9", "--force"],
        "jobs/a.yaml",
        "jobs/a.yaml",
    ),
    "import -o": (
        ["import", "deploy/b/base/batch_v1_job_b.yaml", "-o", "jobs/imported.yaml"],
        "jobs/imported.yaml",
        "jobs/imported.yaml",
    ),
}


@pytest.mark.parametrize("case", POSITIVE)
def test_a_command_on_its_own_or_an_empty_folder_writes_only_its_files(runner, repo, case):
    args, must, may = POSITIVE[case]
    Path("jobs/a.yaml").write_text(job_spec("a", "img:2"))  # something for render to do
    before = state(repo)
    result = runner.invoke(cli, args)
    assert result.exit_code in (0, 1), result.output  # check --fix says it rewrote (1)
    moved = changed(before, state(repo))
    assert must in moved
    assert {p for p in moved if not p.startswith(may) or p.endswith("NOTES.md")} == set()


def test_the_sdk_writes_its_job_folder_and_nothing_else(repo):
    from paddlegen.sdk import PaddleJob

    before = state(repo)
    job = PaddleJob(job_name="sdk", entry_point="python train.py", runtime_image="img:1")
    job.render("deploy")
    moved = changed(before, state(repo))
    assert "deploy/sdk/kustomization.yaml" in moved
    assert {p for p in moved if not p.startswith("deploy/sdk")} == set()


def test_the_sdk_refuses_a_job_folder_another_spec_owns(repo):
    from paddlegen.sdk import PaddleJob

    before = state(repo)
    job = PaddleJob(job_name="a", entry_point="python train.py", runtime_image="img:1")
    with pytest.raises(SpecError) as refused:
        job.render("deploy")
    (finding,) = refused.value.diagnostics
    assert finding.rule == "job-name"
    assert "job 'a' in deploy/a was rendered from jobs/a.yaml, which still names it" in (
        finding.message
    )
    assert state(repo) == before


def test_the_sdk_keeps_the_stamp_of_its_own_spec_saved_and_rendered(repo, runner):
    """The spec to_yaml() gives, saved and rendered by the CLI: the SDK's render of the job
    keeps the folder that file's, and a check of the file finds it current."""
    import json

    from paddlegen.sdk import PaddleJob

    job = PaddleJob(job_name="c", entry_point="python train.py", runtime_image="img:1")
    Path("jobs/c.yaml").write_text(job.to_yaml())
    invoked(runner, "render", "jobs", "-o", "deploy")
    stamp = Path("deploy/c/.paddlegen-stamp")
    spec = json.loads(stamp.read_text().split("\n", 1)[1])["spec"]
    assert spec == "../../jobs/c.yaml"
    job.render("deploy")
    assert json.loads(stamp.read_text().split("\n", 1)[1])["spec"] == spec
    invoked(runner, "check", "jobs/c.yaml", "-o", "deploy")
