"""`paddlegen plan` in real git repositories: every run and deletion of an Argo CD
Application a merge causes, named before rendering and after alike, and nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from paddlegen.cli import cli
from paddlegen.gitops.merge import spec_changes
from tests.builders import job_spec
from tests.helpers import drop_source, paddlegen_of, release, rendered_quickstart

OVERLAYS = """\
overlays:
  dev:
    spec:
      image: img:dev
  prod:
    spec:
      image: img:prod
"""
GONE = "and a running job with it"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def commit(repo: Path, message: str = "change") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture
def repo(tmp_path, runner, monkeypatch) -> Path:
    """A repository whose main branch holds specs a and b (b with environments dev and
    prod) and their rendered output; the working directory."""
    repo = tmp_path / "repo"
    (repo / "jobs").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo, "a", job_spec("a"))
    write(repo, "b", job_spec("b") + OVERLAYS)
    monkeypatch.chdir(repo)
    render(runner)
    commit(repo, "init")
    return repo


def write(repo: Path, name: str, text: str) -> None:
    (repo / "jobs" / f"{name}.yaml").write_text(text)


def render(runner, *args: str) -> None:
    done = runner.invoke(cli, ["render", "jobs", "-o", "deploy", *args])
    assert done.exit_code == 0, done.output


def plan(runner, *args: str, code: int = 0):
    done = runner.invoke(cli, ["plan", "jobs", "-o", "deploy", *args])
    assert done.exit_code == code, done.output
    return done


def targets(runner, *args: str, code: int = 0) -> list[tuple[str, str | None, str, str]]:
    out = plan(runner, "--output-format", "json", *args, code=code).stdout
    return [
        (t["job"], t["environment"], t["action"], t["reason"]) for t in json.loads(out)["targets"]
    ]


def before_and_after_rendering(runner, *args: str, code: int = 0):
    """The plan before the working tree's specs are rendered, which must be the plan after
    (a render that removes an environment is allowed to by the plan's own flag)."""
    before = targets(runner, *args, code=code)
    render(runner, *(arg for arg in args if arg == "--allow-removal"))
    assert targets(runner, *args, code=code) == before
    return before


UNCHANGED = [
    ("a", None, "unchanged", ""),
    ("b", "dev", "unchanged", ""),
    ("b", "prod", "unchanged", ""),
]


def test_nothing_changed_is_unchanged_before_and_after_rendering(repo, runner):
    assert before_and_after_rendering(runner) == UNCHANGED
    done = plan(runner)
    assert done.stdout == "merging into HEAD: 0 create, 0 rerun, 0 delete, 3 unchanged\n"


def test_a_new_spec_is_a_create(repo, runner):
    write(repo, "c", job_spec("c"))
    assert before_and_after_rendering(runner) == [*UNCHANGED, ("c", None, "create", "")]


def test_a_base_without_the_folder_creates_everything(repo, runner):
    git(repo, "checkout", "-q", "-b", "empty", "main")
    git(repo, "rm", "-rq", "deploy")
    commit(repo, "no output yet")
    assert targets(runner, "--base", "empty") == [(j, e, "create", "") for j, e, _, _ in UNCHANGED]


def test_a_changed_field_is_a_rerun_naming_it(repo, runner):
    write(repo, "a", job_spec("a", image="img:2"))
    found = before_and_after_rendering(runner)
    assert found == [("a", None, "rerun", "spec changed: spec.image"), *UNCHANGED[1:]]


def test_each_environment_is_an_application_of_its_own(repo, runner):
    write(repo, "b", job_spec("b") + OVERLAYS.replace("img:prod", "img:prod2"))
    assert before_and_after_rendering(runner) == [
        UNCHANGED[0],
        UNCHANGED[1],
        ("b", "prod", "rerun", "spec changed: overlays.prod.spec.image"),
    ]
    commit(repo)
    # What every environment shares runs every environment again.
    write(
        repo,
        "b",
        job_spec("b", extra="  command: [python, train.py]\n")
        + OVERLAYS.replace("prod\n", "prod3\n"),
    )
    assert targets(runner) == [
        UNCHANGED[0],
        ("b", "dev", "rerun", "spec changed: spec.command"),
        ("b", "prod", "rerun", "spec changed: spec.command, overlays.prod.spec.image"),
    ]


def test_custom_changes_are_reruns_that_fail_unless_allowed(repo, runner):
    custom = repo / "deploy" / "a" / "custom"
    custom.mkdir()
    (custom / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
    )
    reason = "custom/ changed: custom/kustomization.yaml"
    found = targets(runner, code=1)
    assert found == [("a", None, "rerun", reason), *UNCHANGED[1:]]
    done = plan(runner, code=1)
    assert done.stdout.startswith(f"rerun   a: {reason}\n")
    assert done.stderr == (
        "deploy/a: error: Argo CD runs job a again (Application a), and its spec did not ask "
        f"for it: {reason} (--allow-rerun allows it) [rerun]\n1 error in deploy/a\n"
    )
    assert targets(runner, "--allow-rerun") == found
    # Its custom/ is every environment's.
    custom = repo / "deploy" / "b" / "custom"
    custom.mkdir()
    (custom / "networkpolicy.yaml").write_text("kind: NetworkPolicy\n")
    reason = "custom/ changed: custom/networkpolicy.yaml"
    assert targets(runner, "--allow-rerun")[1:] == [
        ("b", "dev", "rerun", reason),
        ("b", "prod", "rerun", reason),
    ]


def test_a_spec_change_with_custom_is_asked_for(repo, runner):
    write(repo, "a", job_spec("a", image="img:2"))
    (repo / "deploy" / "a" / "custom").mkdir()
    (repo / "deploy" / "a" / "custom" / "np.yaml").write_text("kind: NetworkPolicy\n")
    reason = "spec changed: spec.image; custom/ changed: custom/np.yaml"
    assert targets(runner)[0] == ("a", None, "rerun", reason)


def test_a_removed_spec_is_a_delete_that_fails_unless_allowed(repo, runner):
    (repo / "jobs" / "a.yaml").unlink()
    reason = f"its spec is gone: Argo CD deletes Application a, {GONE}"
    found = before_and_after_rendering(runner, code=1)
    assert found == [("a", None, "delete", reason), *UNCHANGED[1:]]
    done = plan(runner, code=1)
    assert done.stdout == (
        f"delete  a: {reason}\nmerging into HEAD: 0 create, 0 rerun, 1 delete, 2 unchanged\n"
    )
    assert f"deploy/a: error: {reason} (--allow-removal allows it) [removal]" in done.stderr
    assert targets(runner, "--allow-removal") == found
    plan(runner, "--allow-rerun", code=1)  # one does not allow the other


def test_a_removed_environment_deletes_its_application_alone(repo, runner):
    write(repo, "b", job_spec("b") + OVERLAYS.split("  prod:")[0])
    reason = f"its spec has no overlay prod any more: Argo CD deletes Application b-prod, {GONE}"
    assert before_and_after_rendering(runner, "--allow-removal") == [
        UNCHANGED[0],
        UNCHANGED[1],
        ("b", "prod", "delete", reason),
    ]


def test_overlays_removed_replace_the_applications(repo, runner):
    write(repo, "b", job_spec("b"))
    gone = f"its spec has no overlays any more: Argo CD deletes Application b-{{}}, {GONE}"
    assert targets(runner, "--allow-removal") == [
        UNCHANGED[0],
        ("b", None, "create", ""),
        ("b", "dev", "delete", gone.format("dev")),
        ("b", "prod", "delete", gone.format("prod")),
    ]


def test_a_renamed_job_is_a_delete_and_a_create(repo, runner):
    write(repo, "a", job_spec("a2"))
    reason = f"its spec renders job a2 now: Argo CD deletes Application a, {GONE}"
    assert before_and_after_rendering(runner, "--allow-removal") == [
        ("a", None, "delete", reason),
        ("a2", None, "create", ""),
        *UNCHANGED[1:],
    ]


def test_json_and_markdown(repo, runner):
    write(repo, "a", job_spec("a", image="img:2"))
    (repo / "jobs" / "b.yaml").unlink()
    write(repo, "c", job_spec("c"))
    args = ["--allow-removal"]
    gone = f"its spec is gone: Argo CD deletes Application b-{{}}, {GONE}"
    found = [
        ("a", None, "rerun", "spec changed: spec.image"),
        ("b", "dev", "delete", gone.format("dev")),
        ("b", "prod", "delete", gone.format("prod")),
        ("c", None, "create", ""),
    ]
    keys = ("job", "environment", "action", "reason")
    assert json.loads(plan(runner, "--output-format", "json", *args).stdout) == {
        "targets": [dict(zip(keys, target, strict=True)) for target in found]
    }
    assert plan(runner, "--output-format", "markdown", *args).stdout == (
        "### paddlegen plan: merging into HEAD\n"
        "\n"
        "1 create, 1 rerun, 2 delete, 0 unchanged. Each row is an Argo CD Application; under "
        "Argo CD every change to one runs its job.\n"
        "\n"
        "| job | environment | action | reason |\n"
        "| --- | --- | --- | --- |\n"
        "| a |  | rerun | spec changed: spec.image |\n"
        f"| b | dev | **delete** | {gone.format('dev')} |\n"
        f"| b | prod | **delete** | {gone.format('prod')} |\n"
        "| c |  | create |  |\n"
    )


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_plan_writes_nothing(repo, runner, tmp_path, monkeypatch):
    write(repo, "a", job_spec("a", image="img:2"))  # rendered by plan, not reused
    write(repo, "c", job_spec("c"))
    (repo / "jobs" / "b.yaml").unlink()
    shutil.rmtree(repo / "deploy" / "b")  # a folder plan must not make again
    cache = tmp_path / "cache"
    monkeypatch.setenv("PADDLEGEN_CACHE_DIR", str(cache))
    before = tree_digest(repo)  # .git included
    assert [t[2] for t in targets(runner, "--allow-removal")] == [
        "rerun",
        "delete",
        "delete",
        "create",
    ]
    assert tree_digest(repo) == before
    assert not (repo / "deploy" / "c").exists()
    assert not list(repo.rglob(".paddlegen-lock*"))


def test_base_names_a_branch(repo, runner):
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "a", job_spec("a", image="img:2"))
    render(runner)
    commit(repo)
    assert targets(runner)[0][2] == "unchanged"  # against HEAD: committed already
    assert targets(runner, "--base", "main")[0] == ("a", None, "rerun", "spec changed: spec.image")


def test_a_base_that_is_no_commit_is_an_error(repo, runner):
    done = plan(runner, "--base", "mian", code=2)
    assert done.stderr == (
        f"paddlegen: error: --base mian: no such commit in the git repository at {repo}\n"
    )


def test_an_output_outside_git_is_an_error(tmp_path, runner, monkeypatch):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text(job_spec("a"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    done = plan(runner, code=2)
    assert done.stdout == ""
    assert done.stderr == (
        "paddlegen: error: deploy: not in a git repository (plan compares the folder with a "
        "commit of the repository holding it)\n"
    )


def test_a_spec_with_errors_is_reported_at_its_line(repo, runner):
    write(repo, "a", job_spec("a").replace("workload: job", "workload: jb"))
    done = plan(runner, code=1)
    assert done.stdout == ""
    assert done.stderr.startswith("jobs/a.yaml:6:13: error: $.spec.workload: ")
    assert done.stderr.endswith("paddlegen: nothing planned: 1 of 2 specs has errors\n")


def test_a_new_paddlegen_reruns_only_what_render_upgrade_takes(tmp_path):
    """A release that renders a job differently: its plan names no rerun, nor does the
    render it makes; `render --upgrade JOB` is a rerun, which plan fails on unless allowed,
    and which `plan --upgrade JOB` shows before it."""
    repo = rendered_quickstart(tmp_path)
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "init")
    new = release(tmp_path, "0.2.0")

    def planned(*args: str) -> tuple[int, list[tuple[str, str]]]:
        done = paddlegen_of(new, repo, "plan", "jobs", "--output-format", "json", *args)
        assert done.returncode in (0, 1), done.stderr
        found = json.loads(done.stdout)["targets"]
        return done.returncode, [(t["action"], t["reason"]) for t in found]

    assert planned() == (0, [("unchanged", "")])
    assert paddlegen_of(new, repo, "render", "jobs", "-o", "deploy").returncode == 0
    assert git(repo, "status", "--porcelain") == ""  # the files 0.1.0 wrote, kept
    assert planned() == (0, [("unchanged", "")])
    # what `render --upgrade` would do, previewed: the rerun, and nothing written
    rerun = ("rerun", "paddlegen's rendering changed (0.1.0 to 0.2.0)")
    assert planned("--upgrade", "quickstart") == (1, [rerun])
    assert planned("--upgrade-all", "--allow-rerun") == (0, [rerun])
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    done = paddlegen_of(new, repo, "render", "jobs", "-o", "deploy", "--upgrade", "quickstart")
    assert done.returncode == 0, done.stderr
    assert planned() == (1, [rerun])
    assert planned("--allow-rerun") == (0, [rerun])
    commit(repo, "take 0.2.0's rendering")
    assert planned() == (0, [("unchanged", "")])


def test_a_folder_stamped_without_its_spec_digest_reruns_on_a_new_paddlegen(tmp_path):
    """A stamp that does not say what of its input is the user's: a new paddlegen renders it
    anew, and plan says that this run is paddlegen's, before rendering and after."""
    repo = rendered_quickstart(tmp_path)
    drop_source(repo / "deploy" / "quickstart" / ".paddlegen-stamp")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "init")
    new = release(tmp_path, "0.2.0")
    reason = "paddlegen's rendering changed"
    rerun = [{"job": "quickstart", "environment": None, "action": "rerun", "reason": reason}]
    for _ in ("before rendering", "after"):
        done = paddlegen_of(new, repo, "plan", "jobs", "--output-format", "json")
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["targets"] == rerun
        assert paddlegen_of(new, repo, "render", "jobs", "-o", "deploy").returncode == 0


def test_one_environments_tree(repo, runner):
    """`render --env ENV` writes each job flat: one Application each, of that environment."""
    shutil.rmtree(repo / "deploy")
    render(runner, "--env", "prod")
    commit(repo, "prod alone")
    write(repo, "b", job_spec("b") + OVERLAYS.replace("img:prod", "img:prod2"))
    write(repo, "a", job_spec("a", image="img:2"))
    assert targets(runner, "--env", "prod") == [
        ("a", "prod", "rerun", "spec changed: spec.image"),
        ("b", "prod", "rerun", "spec changed: overlays.prod.spec.image"),
    ]


@pytest.mark.parametrize(
    ("then", "now", "env", "fields"),
    [
        ({"spec": {"a": 1}}, {"spec": {"a": 1}}, None, []),
        ({"spec": {"a": 1}}, {"spec": {"a": True}}, None, ["spec.a"]),  # YAML's 1 is no true
        ({"spec": {"a": 1, "b": 2}}, {"spec": {"c": 3, "a": 1}}, None, ["spec.c", "spec.b"]),
        (
            {"spec": {"env": [{"v": 1}, {"v": 2}]}},
            {"spec": {"env": [{"v": 1}, {"v": 3}]}},
            None,
            ["spec.env[1].v"],
        ),
        ({"spec": {"env": [1]}}, {"spec": {"env": [1, 2]}}, None, ["spec.env"]),
        ({"overlays": {"dev": {"x": 1}}}, {"overlays": {"dev": {"x": 2}}}, "prod", []),
        (
            {"overlays": {"dev": {"x": 1}}},
            {"overlays": {"dev": {"x": 2}}},
            "dev",
            ["overlays.dev.x"],
        ),
        ({}, {"overlays": {"dev": {"x": 2}}}, "dev", ["overlays.dev"]),
    ],
)
def test_spec_changes(then, now, env, fields):
    assert spec_changes(then, now, env) == fields
