"""Upgrades under Argo CD v3.5.1 on the real node: two jobs run to completion; a new paddlegen
that renders them differently (a changed template and version, in a copy of the package)
re-renders the repository, which is committed and hard-refreshed; `paddlegen plan` said before
that commit that it runs nothing again, and `plan --upgrade-all` that taking the new rendering
would run both again. A change of one spec then runs that job once, as `plan` said; the other,
finished, never runs again: checked last of the node's tests (`late`), minutes after its hard
refresh, while the others ran."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_argocd import (
    application,
    git,
    init_repo,
    paddlegen,
    refresh,
    render_and_commit,
    wait_synced,
)
from tests.cluster.test_argocd_runtime_safety import settle
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import require_tool
from tests.helpers import paddlegen_of, release

pytestmark = pytest.mark.node

NAMESPACE = "acd-upgrades"
FINISHED, CHANGED = "upgrade-finished", "upgrade-changed"
JOBS = (FINISHED, CHANGED)
WINDOW = datetime.timedelta(minutes=2)  # no new run of the finished job in this long
NEW_RENDERING = "paddlegen's rendering changed (0.1.0 to 0.2.0)"


@dataclass
class Released:
    """The repository after the new paddlegen's commit, and what ran before it."""

    kube: Kube
    repo: Path
    new: Path  # the new paddlegen's package tree
    ran: dict[str, str]  # job -> the uid of its Job, from its one run
    history: dict[str, int]  # job -> its Application's sync history length then
    refreshed: datetime.datetime  # when the new paddlegen's commit was hard-refreshed (UTC)


def spec(name: str, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "workload": "job",
            "image": image,
            "imagePullPolicy": "Never",  # imported by `up`, no registry has it
            "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "256Mi"}},
            "command": ["python3", "-c", "print('trained')"],
            "run": {"restartPolicy": "Never", "backoffLimit": 0},
        },
    }


def planned(repo: Path, new: Path, *args: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """The new paddlegen's `plan` of the repository against HEAD: its exit code, and each
    job's action and reason."""
    done = paddlegen_of(new, repo, "plan", "jobs", "--output-format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    targets = json.loads(done.stdout)["targets"]
    return done.returncode, {t["job"]: (t["action"], t["reason"]) for t in targets}


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def job_uid(kube: Kube, job: str) -> str | None:
    found = get(kube, NAMESPACE, "jobs", job)
    return found["metadata"]["uid"] if found else None


def runs(kube: Kube, job: str) -> int:
    return len(application(kube, job)["status"].get("history", []))


@pytest.fixture(scope="session")
def released(node: Kube, tmp_path_factory: pytest.TempPathFactory) -> Released:
    require_tool("kustomize")  # the repo-server builds the rendered kustomizations with it
    kube = with_extras(node, ["argocd"])
    kube.run("create", "namespace", NAMESPACE)
    image = local_cluster().images.PADDLE.reference
    work = tmp_path_factory.mktemp("upgrades")
    repo = init_repo(work / "jobs-repo")
    first = render_and_commit(repo, {f"{j}.yaml": spec(j, image) for j in JOBS}, "two jobs")
    paddlegen(
        "argocd", "--mode", "applications", "--deploy", str(repo / "deploy"),
        "-o", str(repo / "argocd"), "--repo-url", f"file://{repo}", "--revision", "main",
        "--dest-server", kube.server,
    )  # fmt: skip
    local_cluster().install(repo / "argocd", kube.state)
    for job in JOBS:  # as the commit's webhook would: the repo server caches the branch 3 min
        refresh(kube, job)
    for job in JOBS:  # the hook Job completes on the node, and the sync with it
        wait_synced(kube, job, first)
    ran = {job: job_uid(kube, job) or "" for job in JOBS}
    history = {job: runs(kube, job) for job in JOBS}

    # The new paddlegen: `plan` says it runs nothing again, and what taking its rendering
    # would run; its render keeps every byte of both jobs, and the commit is refreshed.
    new = release(work, "0.2.0")
    assert planned(repo, new) == (0, {j: ("unchanged", "") for j in JOBS})
    assert planned(repo, new, "--upgrade-all") == (1, {j: ("rerun", NEW_RENDERING) for j in JOBS})
    done = paddlegen_of(new, repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert "the files paddlegen 0.1.0 wrote" in done.stderr, done.stderr
    assert git(repo, "status", "--porcelain", "deploy") == ""
    released = commit(repo, "re-rendered by paddlegen 0.2.0")
    for job in JOBS:  # hard-refreshed, compared at the new commit: Synced, and no sync
        settle(kube, job, released)
    refreshed = datetime.datetime.now(datetime.timezone.utc)
    return Released(kube, repo, new, ran, history, refreshed)


def test_a_changed_spec_runs_its_job_once_as_plan_said(released: Released) -> None:
    kube, repo, new = released.kube, released.repo, released.new
    spec_file = repo / "jobs" / f"{CHANGED}.yaml"
    data = yaml.safe_load(spec_file.read_text())
    data["spec"]["env"] = [{"name": "EPOCHS", "value": "2"}]
    spec_file.write_text(yaml.safe_dump(data, sort_keys=False))

    for _ in ("before rendering", "after"):  # a rerun its own spec asks for passes
        assert planned(repo, new) == (
            0,
            {FINISHED: ("unchanged", ""), CHANGED: ("rerun", "spec changed: spec.env")},
        )
        done = paddlegen_of(new, repo, "render", "jobs", "-o", "deploy")
        assert done.returncode == 0, done.stderr
    rendered = (repo / "deploy" / CHANGED / f"batch_v1_job_{CHANGED}.yaml").read_text()
    assert "suspend: false" in rendered  # the changed spec takes the new rendering
    changed = commit(repo, "a changed spec")
    refresh(kube, CHANGED)
    wait_for(
        "the changed job's new run",
        lambda: job_uid(kube, CHANGED) not in (None, released.ran[CHANGED]),
    )
    wait_synced(kube, CHANGED, changed)
    assert runs(kube, CHANGED) == released.history[CHANGED] + 1
    assert planned(repo, new) == (0, {j: ("unchanged", "") for j in JOBS})


@pytest.mark.late
def test_a_new_paddlegen_runs_the_finished_job_no_more(released: Released) -> None:
    """Checked last of the node's tests: by then the window has passed while they ran, and
    Argo CD compared the Application again on its own (every 3 minutes); run alone, the test
    waits out the window and asks for the comparison."""
    kube, head = released.kube, git(released.repo, "rev-parse", "HEAD")
    end = released.refreshed + WINDOW
    time.sleep(max(0.0, (end - datetime.datetime.now(datetime.timezone.utc)).total_seconds()))
    status = application(kube, FINISHED)["status"]
    compared = datetime.datetime.fromisoformat(status["reconciledAt"].replace("Z", "+00:00"))
    if compared < end or status["sync"].get("revision") != head:
        settle(kube, FINISHED, head)
        status = application(kube, FINISHED)["status"]
    assert status["sync"]["status"] == "Synced", status["sync"]
    assert job_uid(kube, FINISHED) == released.ran[FINISHED]
    assert runs(kube, FINISHED) == released.history[FINISHED]
    pods = get(kube, NAMESPACE, "pods", "-l", f"job-name={FINISHED}")["items"]
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
