"""The shipped pre-commit hooks (.pre-commit-hooks.yaml), run by the real pre-commit.

pre-commit installs the hooks from a git repository: a snapshot of this checkout's package files
(committed in a temporary repository, so uncommitted and untracked work is tested too).

`try-repo` builds a throwaway environment the way a user's pre-commit does (paddlegen and its
dependencies from the package index, ~15 s), so it runs once. The other tests share one
environment in a temporary PRE_COMMIT_HOME that sees this interpreter's site-packages
(VIRTUALENV_SYSTEM_SITE_PACKAGES): pip then installs only the snapshot of paddlegen (~5 s), and
the environment has 1,400 files instead of 19,000 (kubernetes-validate's schemas), which matters
because deleting them once they reached the disk takes over a minute here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import paddlegen
from tests.builders import job_spec
from tests.conftest import EXAMPLES, ROOT, require_tool
from tests.helpers import add_service_monitor, copy_repository

# What `pip install .` of the hook repository needs (pyproject: readme, version, force-include).
PACKAGE_FILES = [
    "pyproject.toml",
    "README.md",
    "LICENSE",  # pyproject's license-files
    ".pre-commit-hooks.yaml",
    "paddlegen",
    "templates",
    "schemas",
]
HOOK_IDS = [
    "paddlegen-validate",
    "paddlegen-check",
    "paddlegen-render",
    "paddlegen-validate-deploy",
    "paddlegen-plan",
]
GIT_COMMIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q"]

OVERLAY = "overlays:\n  prod:\n    spec:\n      image: img:prod\n"
KUEUE_SETUP = """\
apiVersion: setup.paddlegen/v1
kind: KueueSetup
flavors: [{{name: gpu}}]
teams:
  - name: team
    namespaces: [ml]
    quotas: {{gpu: {{cpu: 64, memory: 256Gi, nvidia.com/gpu: {gpus}}}}}
"""
# `wokrer` is on line 9, at column 3.
INVALID = job_spec("bad", extra="  wokrer: {replicas: 2}\n")


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``cwd``; stdout and stderr merged, as a person sees them."""
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=300,
    )


def git_init(path: Path, env: dict[str, str]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    run(["git", "init", "-q", "-b", "main"], path, env).check_returncode()


def commit_all(path: Path, env: dict[str, str]) -> None:
    run(["git", "add", "-A"], path, env).check_returncode()
    run([*GIT_COMMIT, "-m", "commit"], path, env).check_returncode()


def head(path: Path, env: dict[str, str]) -> str:
    return run(["git", "rev-parse", "HEAD"], path, env).stdout.strip()


def config_text(hooks_repo: Path, rev: str, hooks: list[str], extra: str = "") -> str:
    ids = "".join(f"      - id: {hook}\n{extra}" for hook in hooks)
    return f"repos:\n  - repo: {hooks_repo}\n    rev: {rev}\n    hooks:\n{ids}"


class Hooks:
    """The snapshot repository of the hooks, and an environment with pre-commit's home in tmp."""

    def __init__(self, exe: str, repo: Path, rev: str, env: dict[str, str]) -> None:
        self.exe, self.repo, self.rev, self.env = exe, repo, rev, env

    def config(self, hooks: list[str] = HOOK_IDS, extra: str = "") -> str:
        return config_text(self.repo, self.rev, hooks, extra)

    def pre_commit(
        self, cwd: Path, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run([self.exe, *args, "--color", "never"], cwd, env or self.env)

    def gitops_repo(
        self, path: Path, *, jobs: str = "jobs", deploy: str = "deploy", config: str | None = None
    ) -> Path:
        """A committed repository with two specs (one with an overlay) and their output."""
        git_init(path, self.env)
        (path / jobs).mkdir()
        (path / jobs / "a.yaml").write_text(job_spec("a"))
        (path / jobs / "b.yaml").write_text(job_spec("b", extra=OVERLAY))
        render = [sys.executable, "-m", "paddlegen", "render", jobs, "-o", deploy]
        run(render, path, self.env).check_returncode()
        (path / ".pre-commit-config.yaml").write_text(config or self.config(HOOK_IDS[:2]))
        commit_all(path, self.env)
        return path


@pytest.fixture(scope="module")
def hooks(tmp_path_factory) -> Iterator[Hooks]:
    exe = require_tool("pre-commit")
    base = tmp_path_factory.mktemp("precommit")
    # No GIT_* from a calling git hook (GIT_INDEX_FILE would point into another repository).
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PRE_COMMIT_HOME"] = str(base / "home")  # never ~/.cache/pre-commit
    env["VIRTUALENV_SYSTEM_SITE_PACKAGES"] = "1"  # see the module docstring
    repo = base / "paddlegen"
    git_init(repo, env)
    copy_repository(repo, PACKAGE_FILES)
    commit_all(repo, env)
    found = Hooks(exe, repo, head(repo, env), env)
    # Install the hook environment once (needs the package index); every test reuses it.
    scratch = found.gitops_repo(base / "install", config=found.config())
    installed = found.pre_commit(scratch, "install-hooks")
    assert installed.returncode == 0, installed.stdout
    yield found
    shutil.rmtree(base)


def test_the_manifest_is_valid():
    out = subprocess.run(
        [require_tool("pre-commit"), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_try_repo_passes_on_a_fresh_repository(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo")
    # try-repo builds its own environment in a temporary store, here from the package index as
    # for a user: the slowest test of the module.
    fresh = {k: v for k, v in hooks.env.items() if k != "VIRTUALENV_SYSTEM_SITE_PACKAGES"}
    out = hooks.pre_commit(repo, "try-repo", str(hooks.repo), "--all-files", env=fresh)
    assert out.returncode == 0, out.stdout
    for name in ("paddlegen validate", "paddlegen check", "paddlegen render"):
        assert any(
            line.startswith(name) and line.endswith("Passed") for line in out.stdout.splitlines()
        ), (name, out.stdout)


def test_stale_output_fails_the_commit_with_the_diff(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo")
    assert hooks.pre_commit(repo, "install").returncode == 0
    before = head(repo, hooks.env)
    spec = repo / "jobs" / "a.yaml"
    spec.write_text(spec.read_text().replace("img:1", "img:2"))
    run(["git", "add", "jobs"], repo, hooks.env).check_returncode()

    out = run([*GIT_COMMIT, "-m", "new image, no render"], repo, hooks.env)

    assert out.returncode != 0, out.stdout
    assert head(repo, hooks.env) == before  # the commit did not happen
    assert "paddlegen validate" in out.stdout and "Passed" in out.stdout
    assert "paddlegen check (rendered output is fresh)" in out.stdout and "Failed" in out.stdout
    assert "+++ b/deploy/a/batch_v1_job_a.yaml" in out.stdout
    assert "-        image: img:1\n+        image: img:2\n" in out.stdout
    assert "stale: deploy/a/batch_v1_job_a.yaml" in out.stdout


def test_a_quota_cut_in_the_kueue_setup_alone_fails_the_commit(hooks, tmp_path):
    """A commit that changes only platform/kueue.yaml runs the check, which holds the queued
    specs to the KueueSetup found there."""
    repo = hooks.gitops_repo(tmp_path / "repo")
    (repo / "jobs" / "q.yaml").write_text(
        job_spec("q", extra="  gpus: 4\n  scheduling: {kueue: {queue: team}}\n").replace(
            "metadata:\n", "metadata:\n  namespace: ml\n"
        )
    )
    setup = repo / "platform" / "kueue.yaml"
    setup.parent.mkdir()
    setup.write_text(KUEUE_SETUP.format(gpus=8))
    run([sys.executable, "-m", "paddlegen", "render", "jobs", "-o", "deploy"], repo, hooks.env)
    commit_all(repo, hooks.env)
    assert hooks.pre_commit(repo, "install").returncode == 0
    setup.write_text(KUEUE_SETUP.format(gpus=2))
    run(["git", "add", "platform"], repo, hooks.env).check_returncode()

    out = run([*GIT_COMMIT, "-m", "fewer GPUs for the team"], repo, hooks.env)

    assert out.returncode != 0, out.stdout
    assert "paddlegen check (rendered output is fresh)" in out.stdout and "Failed" in out.stdout
    assert "jobs/q.yaml" in out.stdout, out.stdout


def test_render_hook_rewrites_stale_output_and_fails_once(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo", config=hooks.config(["paddlegen-render"]))
    spec = repo / "jobs" / "b.yaml"
    spec.write_text(spec.read_text().replace("img:prod", "img:prod2"))
    run(["git", "add", "jobs"], repo, hooks.env).check_returncode()

    first = hooks.pre_commit(repo, "run")
    assert first.returncode == 1, first.stdout
    assert "files were modified by this hook" in first.stdout
    patch = next((repo / "deploy" / "b" / "overlays" / "prod").glob("patch-*job_b.yaml"))
    assert "img:prod2" in patch.read_text()

    run(["git", "add", "deploy"], repo, hooks.env).check_returncode()
    second = hooks.pre_commit(repo, "run")
    assert second.returncode == 0, second.stdout


def test_the_plan_hook_fails_a_commit_that_deletes_an_application(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo", config=hooks.config(["paddlegen-plan"]))
    assert hooks.pre_commit(repo, "install").returncode == 0
    before = head(repo, hooks.env)
    (repo / "jobs" / "a.yaml").unlink()
    render = [sys.executable, "-m", "paddlegen", "render", "jobs", "-o", "deploy"]
    run(render, repo, hooks.env).check_returncode()
    run(["git", "add", "-A"], repo, hooks.env).check_returncode()

    out = run([*GIT_COMMIT, "-m", "remove a"], repo, hooks.env)

    assert out.returncode != 0, out.stdout
    assert head(repo, hooks.env) == before
    assert "delete  a: its spec is gone: Argo CD deletes Application a" in out.stdout
    assert "(--allow-removal allows it) [removal]" in out.stdout

    # A spec's own change is a run it asks for: the commit goes through.
    run(["git", "reset", "-q", "--hard"], repo, hooks.env).check_returncode()
    spec = repo / "jobs" / "b.yaml"
    spec.write_text(spec.read_text().replace("img:prod", "img:prod2"))
    run(render, repo, hooks.env).check_returncode()
    run(["git", "add", "-A"], repo, hooks.env).check_returncode()
    done = run([*GIT_COMMIT, "-m", "b's new image"], repo, hooks.env)
    assert done.returncode == 0, done.stdout
    assert head(repo, hooks.env) != before


def test_invalid_spec_fails_validate_at_its_line(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo")
    (repo / "jobs" / "bad.yaml").write_text(INVALID)
    run(["git", "add", "jobs"], repo, hooks.env).check_returncode()

    out = hooks.pre_commit(repo, "run", "paddlegen-validate")

    assert out.returncode == 1, out.stdout
    assert (
        "jobs/bad.yaml:9:3: error: $.spec.wokrer: unknown field (did you mean 'worker'?) [schema]"
    ) in out.stdout
    assert "jobs/a.yaml" not in out.stdout  # only the files the commit changes are validated


FINDING = "jobs/bad.yaml:9:3: error: $.spec.wokrer: unknown field (did you mean 'worker'?) [schema]"


def test_a_commit_prints_each_finding_once(hooks, tmp_path):
    """paddlegen-validate lists the findings; paddlegen-check, which renders every spec, names
    the spec and the command that lists them (issue #25: both printed every finding)."""
    repo = hooks.gitops_repo(tmp_path / "repo")
    assert hooks.pre_commit(repo, "install").returncode == 0
    (repo / "jobs" / "bad.yaml").write_text(INVALID)
    run(["git", "add", "jobs"], repo, hooks.env).check_returncode()

    out = run([*GIT_COMMIT, "-m", "a bad spec"], repo, hooks.env)

    assert out.returncode != 0, out.stdout
    assert out.stdout.count(FINDING) == 1, out.stdout
    assert out.stdout.count("1 error in jobs/bad.yaml") == 1, out.stdout
    assert (
        "paddlegen: nothing checked: 1 of 3 specs has errors (jobs/bad.yaml); "
        "`paddlegen validate jobs` lists them"
    ) in out.stdout
    for hook in ("paddlegen validate", "paddlegen check (rendered output is fresh)"):
        assert any(
            line.startswith(hook) and line.endswith("Failed") for line in out.stdout.splitlines()
        ), (hook, out.stdout)


@pytest.mark.parametrize("hook", ["paddlegen-check", "paddlegen-render"])
def test_a_warning_is_printed_once_too(hooks, tmp_path, hook):
    repo = hooks.gitops_repo(tmp_path / "repo", config=hooks.config(["paddlegen-validate", hook]))
    spec = repo / "jobs" / "a.yaml"
    spec.write_text(spec.read_text().replace("img:1", "img:latest"))  # [image-tag], stale
    run(["git", "add", "jobs"], repo, hooks.env).check_returncode()

    out = hooks.pre_commit(repo, "run", "--verbose")  # every hook's output, passed or not

    assert out.returncode == 1, out.stdout
    assert out.stdout.count("[image-tag]") == 1, out.stdout
    assert "jobs/a.yaml:7:10: warning: $.spec.image:" in out.stdout


def test_users_override_the_folders_with_args(hooks, tmp_path):
    override = "        args: [specs, -o, manifests]\n        files: ^(specs|manifests)/\n"
    config = hooks.config(["paddlegen-check"], extra=override)
    repo = hooks.gitops_repo(tmp_path / "repo", jobs="specs", deploy="manifests", config=config)
    clean = hooks.pre_commit(repo, "run", "--all-files", "--verbose")
    assert clean.returncode == 0, clean.stdout
    assert "2 jobs in manifests: up to date" in clean.stdout

    (repo / "manifests" / "a" / "batch_v1_job_a.yaml").unlink()
    stale = hooks.pre_commit(repo, "run", "--all-files")
    assert stale.returncode == 1, stale.stdout
    assert "missing: manifests/a/batch_v1_job_a.yaml" in stale.stdout


def test_hooks_take_ignore_through_args(hooks, tmp_path):
    config = config_text(hooks.repo, hooks.rev, ["paddlegen-validate"]).replace(
        "id: paddlegen-validate\n",
        "id: paddlegen-validate\n        args: [--ignore, secret-literal]\n"
        "      - id: paddlegen-check\n        args: [jobs, -o, deploy, --ignore, secret-literal]\n",
    )
    repo = hooks.gitops_repo(tmp_path / "repo", config=config)
    key = "  env: [{name: LABEL_KEY, value: ctr-7d}]\n"  # a column name that looks like a key
    (repo / "jobs" / "c.yaml").write_text(job_spec("c", extra=key))
    paddlegen = [sys.executable, "-m", "paddlegen"]
    refused = run([*paddlegen, "render", "jobs", "-o", "deploy"], repo, hooks.env)
    assert refused.returncode == 1 and "[secret-literal]" in refused.stdout
    rendered = run(
        [*paddlegen, "render", "jobs", "-o", "deploy", "--ignore", "secret-literal"],
        repo,
        hooks.env,
    )
    assert rendered.returncode == 0, rendered.stdout
    run(["git", "add", "-A"], repo, hooks.env).check_returncode()
    out = hooks.pre_commit(repo, "run", "--all-files")
    assert out.returncode == 0, out.stdout
    assert out.stdout.count("Passed") == 2, out.stdout


def test_the_deploy_hook_takes_schema_locations_through_args(hooks, tmp_path):
    repo = hooks.gitops_repo(tmp_path / "repo", config=hooks.config(["paddlegen-validate-deploy"]))
    add_service_monitor(repo / "deploy" / "a")
    shutil.copytree(ROOT / "tests" / "data" / "schemas", repo / "schemas")
    run(["git", "add", "-A"], repo, hooks.env).check_returncode()
    missing = hooks.pre_commit(repo, "run", "--all-files")
    assert missing.returncode == 1, missing.stdout
    assert "no schema for: monitoring.coreos.com/v1 ServiceMonitor" in missing.stdout

    # The documented args (.pre-commit-hooks.yaml), as a user's config holds them.
    for args, verdict in [
        (
            "[deploy, --schema-location, 'schemas/{{.Group}}/{{.ResourceKind}}_"
            "{{.ResourceAPIVersion}}.json']",
            "spec.endpoints[0].intervall: unknown field",
        ),
        ("[deploy, --ignore-missing-schemas]", "Passed"),
    ]:
        config = hooks.config(["paddlegen-validate-deploy"], extra=f"        args: {args}\n")
        (repo / ".pre-commit-config.yaml").write_text(config)
        out = hooks.pre_commit(repo, "run", "--all-files")
        assert verdict in out.stdout, out.stdout


def test_hooks_run_without_network(hooks, tmp_path):
    # A new network namespace has only a loopback device that is down: no address resolves.
    unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    if not shutil.which("unshare") or subprocess.run([*unshare, "true"]).returncode:
        pytest.skip("cannot create a network namespace here")
    repo = hooks.gitops_repo(tmp_path / "repo", config=hooks.config())
    out = run([*unshare, hooks.exe, "run", "--all-files", "--color", "never"], repo, hooks.env)
    assert out.returncode == 0, out.stdout
    assert out.stdout.count("Passed") == len(HOOK_IDS), out.stdout


def test_the_gitops_example_passes_its_own_config(hooks, tmp_path):
    # examples/gitops/ is the root of a GitOps repository; its config names the hooks by URL.
    repo = tmp_path / "gitops"
    shutil.copytree(EXAMPLES / "gitops", repo)
    config = repo / ".pre-commit-config.yaml"
    text = config.read_text()
    tag = f"v{paddlegen.__version__}"  # the release's tag (CONTRIBUTING.md, "Releasing")
    assert f"repo: https://git.example.com/tools/paddlegen\n    rev: {tag}\n" in text
    config.write_text(
        text.replace("https://git.example.com/tools/paddlegen", str(hooks.repo)).replace(
            f"rev: {tag}", f"rev: {hooks.rev}"
        )
    )
    git_init(repo, hooks.env)
    commit_all(repo, hooks.env)

    out = hooks.pre_commit(repo, "run", "--all-files")

    assert out.returncode == 0, out.stdout
    assert out.stdout.count("Passed") == 3, out.stdout
