"""Every `paddlegen ...` command line of the documentation (```console and ```sh blocks) runs:
in a workspace of its own, on the repository's examples, with paddlegen on PATH. A line that
needs a cluster, a network or other tools is listed in NOT_RUN with the reason.

The workspace holds `examples/` (a copy), `jobs/` (the GitOps example's specs) and `deploy/`
(their render), committed in a git repository, as a user's repository would after the quick
start."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.docs.pages import blocks

# A command line that names paddlegen: first, or after a pipe, `&&`, `;` or `$(`.
PADDLEGEN = re.compile(r"(^|[|&;(]\s*)paddlegen\b")

NOT_RUN = {
    "pip install . && paddlegen render examples/quickstart.yaml -o deploy/": (
        "installs paddlegen with pip; its render runs alone as in the quick start"
    ),
    "paddlegen runtime | kubectl apply --server-side -f -     # once per cluster": (
        "applies to a cluster"
    ),
    "kubectl get paddlejobs,jobs -n ml -o yaml | paddlegen import - -o jobs/": (
        "reads from a cluster"
    ),
    "paddlegen validate --server --context staging jobs/": "a dry run on an API server",
    "paddlegen render jobs/ -o deploy/ --validate --server": "a dry run on an API server",
    "paddlegen argocd --repo-url URL --sidecar-image registry.example.com/platform/"
    "paddlegen-cmp:0.2.0    --keep-sidecar 0.1.0=registry.example.com/platform/"
    "paddlegen-cmp:0.1.0": "run by paddlegen 0.2.0, which keeps 0.1.0's sidecar",
}


def command_lines() -> list[tuple[str, str]]:
    """(where, line) of every paddlegen command line; continuation lines joined."""
    found = []
    for block in blocks({"console", "sh", "shell", "bash"}):
        lines = block.body.replace("\\\n", " ").splitlines()
        for offset, line in enumerate(lines):
            line = line.removeprefix("$ ").strip()
            if PADDLEGEN.search(line):
                found.append((f"{block.where}+{offset}", line))
    return found


LINES = command_lines()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    shutil.copytree(EXAMPLES, root / "examples")
    (root / "jobs").mkdir()
    for spec in (EXAMPLES / "gitops" / "jobs").glob("*.yaml"):
        shutil.copy(spec, root / "jobs")
    run("paddlegen render jobs/ -o deploy/", root)
    commit = (
        "git init -q -b main && git add -A && git -c user.name=t -c user.email=t@t commit -qm w"
    )
    assert run(commit, root).returncode == 0
    return root


def run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NO_COLOR", None)
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {line}"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_docs_show_commands_and_every_listed_line_is_still_there():
    lines = {line for _, line in LINES}
    assert len(lines) > 20
    assert set(NOT_RUN) <= lines, set(NOT_RUN) - lines  # a stale entry is noticed


@pytest.mark.parametrize(("where", "line"), LINES, ids=[w for w, _ in LINES])
def test_a_documented_command_runs(where, line, workspace, tmp_path):
    if line in NOT_RUN:
        pytest.skip(f"not run: {NOT_RUN[line]}")
    cwd = tmp_path / "repo"
    shutil.copytree(workspace, cwd, symlinks=True)
    result = run(line, cwd)
    assert result.returncode == 0, f"{where}: {line}\n{result.stdout}\n{result.stderr}"
