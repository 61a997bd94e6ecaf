"""Argo CD v3.5.1 (built from its sources, `hack/local-cluster --with argocd`) syncs what
paddlegen renders from a Git repository: the Application `paddlegen argocd` writes, applied as
a platform team would, syncs the job's folder (Synced, operation Succeeded, the PaddleJob
created), and with the health checks of `paddlegen argocd` in argocd-cm, the PaddleFlow
operator and KWOK running, the sync waits while the job runs (a Sync hook) and succeeds once the
operator marks it Completed; a later commit is a new run of the changed job within 30 s of a
hard refresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from paddlegen.cli import cli
from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import EXAMPLES, ROOT

EXAMPLE = EXAMPLES / "paddlejob-wide-and-deep.yaml"  # 2 ps + 2 workers, PaddleFlow's operator
NAMESPACE = "acd-wide-and-deep"
SYNC_TIMEOUT = 30.0  # the bound: a commit is live within 30 s of a hard refresh
# How long a sync may take to end before it is taken as stuck, not slow: under the full run's
# load Argo CD once took over 30 s to see a completed PaddleJob hook (10 s alone).
SETTLE_TIMEOUT = 120.0


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def paddlegen(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output


def init_repo(repo: Path) -> Path:
    """An empty Git repository with a jobs/ folder, branch main."""
    (repo / "jobs").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@paddlegen.invalid")
    git(repo, "config", "user.name", "paddlegen tests")
    return repo


def render_and_commit(
    repo: Path, specs: dict[str, dict[str, Any]], message: str, *render_args: str
) -> str:
    """Write the specs (file name -> spec) into jobs/, render them into deploy/ (with
    ``render_args``) and commit all; the new commit's sha."""
    for name, spec in specs.items():
        (repo / "jobs" / name).write_text(yaml.safe_dump(spec, sort_keys=False))
    paddlegen("render", str(repo / "jobs"), "-o", str(repo / "deploy"), *render_args)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@dataclass
class Loop:
    """A `file://` Git repository: specs in jobs/, their render in deploy/, and a cluster
    whose Argo CD reads it."""

    kube: Kube
    repo: Path
    specs: dict[str, dict[str, Any]]  # jobs/ file name -> spec
    render_args: tuple[str, ...] = ()  # what `paddlegen render` is given besides the folders

    def commit(self, message: str, *refreshed: str) -> str:
        """Render and commit the specs, then ask for a hard refresh of the ``refreshed``
        Applications (as a Git webhook would); the commit's sha."""
        revision = render_and_commit(self.repo, self.specs, message, *self.render_args)
        for app in refreshed:
            refresh(self.kube, app)
        return revision


def application(kube: Kube, name: str) -> dict[str, Any]:
    return get(kube, "argocd", "applications.argoproj.io", name) or {}


def wait_synced(kube: Kube, app: str, revision: str) -> None:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while not synced_at(found := application(kube, app), revision):
        if time.monotonic() > deadline:
            pytest.fail(
                f"{app} not Synced at {revision[:7]} in {SETTLE_TIMEOUT:.0f} s; "
                + live_now(kube, found)
                + "\n"
                + json.dumps(sync_state(found), indent=1)[:4000]
            )
        time.sleep(0.3)


def sync_state(app: dict[str, Any]) -> dict[str, Any]:
    """What a failed wait shows of an Application: its sync status and revision, conditions,
    and the operation with each resource's result (not the long comparedTo settings, which
    filled the message before)."""
    status = app.get("status", {})
    operation = status.get("operationState", {})
    result = operation.get("syncResult", {})
    return {
        "sync": {k: status.get("sync", {}).get(k) for k in ("status", "revision")},
        "health": status.get("health"),
        "conditions": status.get("conditions"),
        "resources": [
            {k: r.get(k) for k in ("kind", "name", "status", "health")}
            for r in status.get("resources", [])
        ],
        "operation": {k: operation.get(k) for k in ("phase", "message", "retryCount")},
        "synced": result.get("revision"),
        "results": [
            {k: r.get(k) for k in ("kind", "name", "status", "message", "hookPhase")}
            for r in result.get("resources", [])
        ],
    }


def live_now(kube: Kube, app: dict[str, Any]) -> str:
    """What a stuck sync waits on, for its failure's first line: the hook the operation names
    (`waiting for completion of hook group/Kind/name`), as the cluster has it, and every pod
    of the Application's namespace (phase, owner, deletion)."""
    status = app.get("status", {})
    namespace = (
        status.get("sync", {}).get("comparedTo", {}).get("destination", {}).get("namespace", "")
    )
    message = status.get("operationState", {}).get("message", "")
    said = []
    if "waiting for completion of hook " in message:
        group, kind, name = message.rsplit(" ", 1)[-1].split("/")
        hook = get(kube, namespace, f"{kind.lower()}s.{group}" if group else kind, name)
        meta = (hook or {}).get("metadata", {})
        said.append(
            f"hook {kind}/{name} uid {meta.get('uid', '?')[:8]} deleting "
            f"{'deletionTimestamp' in meta} status {json.dumps((hook or {}).get('status'))}"
        )
    for pod in (get(kube, namespace, "pods") or {}).get("items", []):
        meta = pod["metadata"]
        owners = [
            f"{o['kind']}/{o['name']}/{o['uid'][:8]}" for o in meta.get("ownerReferences", [])
        ]
        said.append(
            f"pod {meta['name']} {pod['status'].get('phase')} of {','.join(owners)}"
            + (" deleting" if "deletionTimestamp" in meta else "")
        )
    return "; ".join(said)


def synced_at(app: dict[str, Any], revision: str) -> bool:
    status = app.get("status", {})
    operation = status.get("operationState", {})
    return (
        status.get("sync", {}).get("status") == "Synced"
        and status["sync"].get("revision") == revision
        and operation.get("phase") == "Succeeded"
        and operation.get("syncResult", {}).get("revision") == revision
    )


def health(app: dict[str, Any]) -> str:
    return app.get("status", {}).get("health", {}).get("status", "")


def test_the_components_run_and_the_local_server_is_a_destination(argocd: Kube) -> None:
    kube = argocd
    recorded = json.loads((kube.state / "cluster.json").read_text())["pids"]
    hack = local_cluster()
    assert {hack.argocd.REDIS, *hack.argocd.COMPONENTS} <= set(recorded)
    clusters = get(kube, "argocd", "secrets", "-l", "argocd.argoproj.io/secret-type=cluster")
    assert [base64_text(s["data"]["server"]) for s in clusters["items"]] == [kube.server]
    crds = kube.run("get", "crd", "-o", "name").stdout.split()
    assert {
        "customresourcedefinition.apiextensions.k8s.io/applications.argoproj.io",
        "customresourcedefinition.apiextensions.k8s.io/applicationsets.argoproj.io",
        "customresourcedefinition.apiextensions.k8s.io/appprojects.argoproj.io",
    } <= set(crds)


def base64_text(value: str) -> str:
    import base64

    return base64.b64decode(value).decode()


def test_a_rendered_job_syncs_runs_healthy_and_follows_a_commit(
    argocd: Kube, tmp_path: Path
) -> None:
    kube = argocd
    repo = init_repo(tmp_path / "jobs-repo")
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["metadata"]["namespace"] = NAMESPACE
    first = render_and_commit(repo, {EXAMPLE.name: spec}, "wide-and-deep")
    job = spec["metadata"]["name"]

    # What a platform team installs: paddlegen's Application and its health checks.
    paddlegen(
        "argocd", "--mode", "applications",
        "--deploy", str(repo / "deploy"), "-o", str(repo / "argocd"),
        "--repo-url", f"file://{repo}", "--revision", "main",
        "--dest-server", kube.server, "--dest-namespace", NAMESPACE,
    )  # fmt: skip
    # The health checks first: with them Argo CD waits for the PaddleJob (a Sync hook) to
    # complete; without them it has no health for the kind and counts the hook done at once.
    kube.run(
        "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "merge",
        "--patch-file", str(repo / "argocd" / "patches" / "argocd-cm-health.yaml"),
    )  # fmt: skip
    started = time.monotonic()
    kube.run("apply", "-f", str(repo / "argocd" / "applications" / f"{job}.yaml"))

    # Auto-sync: the namespace is created (CreateNamespace), the run record applied, the
    # PaddleJob created; the sync then waits while the job runs.
    wait_running(kube, job, f"batch.paddlepaddle.org/PaddleJob/{job}")
    print(f"first sync to the running job: {time.monotonic() - started:.1f} s")
    paddlejob = get(kube, NAMESPACE, "paddlejobs.batch.paddlepaddle.org", job)
    tracking = paddlejob["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"]
    assert tracking.startswith(f"{job}:batch.paddlepaddle.org/PaddleJob:"), tracking
    assert application(kube, job)["status"]["sync"]["status"] == "Synced"  # the run record
    wait_for("4 running pods", lambda: len(running(kube)) == 4)
    wait_for("the job Running", lambda: phase(kube, job) == "Running")
    # Its pods succeed, the operator marks it Completed, and the sync succeeds with it.
    complete(kube, job)
    wait_synced(kube, job, first)

    # A commit, then a hard refresh (as a webhook would ask): within 30 s a new run of the
    # changed job, whose pods carry the change.
    old = paddlejob["metadata"]["uid"]
    spec["metadata"].setdefault("labels", {})["team"] = "ads"
    second = render_and_commit(repo, {EXAMPLE.name: spec}, "label the job")
    started = time.monotonic()
    refresh(kube, job)

    def rerun() -> bool:
        found = get(kube, NAMESPACE, "paddlejobs.batch.paddlepaddle.org", job) or {}
        return found.get("metadata", {}).get("uid") not in (None, old)

    wait_for("the changed job", rerun, timeout=SYNC_TIMEOUT)
    print(f"commit to the new run: {time.monotonic() - started:.1f} s")
    paddlejob = get(kube, NAMESPACE, "paddlejobs.batch.paddlepaddle.org", job)
    assert paddlejob["metadata"]["labels"]["team"] == "ads"
    wait_for("4 new pods running", lambda: len(running(kube)) == 4)
    complete(kube, job)
    wait_synced(kube, job, second)


def operation(kube: Kube, app: str) -> dict[str, Any]:
    return application(kube, app).get("status", {}).get("operationState", {})


def wait_running(kube: Kube, app: str, hook: str) -> None:
    """Wait until ``app``'s sync waits for its hook ``hook`` (group/Kind/name) to complete:
    what Argo CD says while a job paddlegen rendered runs."""
    wait_message(kube, app, f"waiting for completion of hook {hook}")


def wait_message(kube: Kube, app: str, message: str, timeout: float = 60.0) -> None:
    """Wait until ``app``'s sync operation says ``message``; on a timeout, say what it said."""
    deadline = time.monotonic() + timeout
    while (said := operation(kube, app).get("message")) != message:
        if time.monotonic() > deadline:
            pytest.fail(f"{app}: {message!r} not said in {timeout:.0f} s; last: {said!r}")
        time.sleep(0.3)


def refresh(kube: Kube, app: str) -> None:
    """Ask for a hard refresh, as a Git webhook or `argocd app get --hard-refresh` would."""
    kube.run(
        "-n", "argocd", "annotate", "application", app, "argocd.argoproj.io/refresh=hard",
        "--overwrite",
    )  # fmt: skip


def compared_with_tree(
    kube: Kube, app: str, source: dict[str, Any], path: str, timeout: float = 60.0
) -> dict[str, Any]:
    """Point ``app``, which renders specs with the plugin, at the committed tree at ``path``
    (no plugin, no automated sync) and ask for a hard refresh; its status once Argo CD has
    compared that tree with what the plugin's sync left live."""
    tree = {**source, "path": path}
    patch = {"spec": {"source": {**tree, "plugin": None}, "syncPolicy": {"automated": None}}}
    kube.run("-n", "argocd", "patch", "application", app, "--type=merge", "-p", json.dumps(patch))
    refresh(kube, app)

    def compared() -> dict[str, Any] | None:
        status = application(kube, app)["status"]
        source = status["sync"].get("comparedTo", {}).get("source", {})
        return status if source.get("path") == path else None

    found: dict[str, Any] = wait_for("the tree compared", compared, timeout=timeout)
    return found


def wait_for_health(kube: Kube, app: str, status: str) -> None:
    """Wait until ``app`` reports health ``status``, asking for a hard refresh whenever the
    controller has taken the last request: one made before the controller read a changed
    argocd-cm would be answered with the old health checks."""

    def probe() -> bool:
        found = application(kube, app)
        if health(found) == status:
            return True
        if "argocd.argoproj.io/refresh" not in found.get("metadata", {}).get("annotations", {}):
            refresh(kube, app)
        return False

    wait_for(f"{app} health {status}", probe)


def complete(kube: Kube, job: str) -> None:
    """Set the running pods Succeeded, as their training ending would, until the operator
    marks the PaddleJob Completed: again while one runs. Under a full run's load, a pod set
    Succeeded was seen Running again, the job never completed, and the sync waited on its hook
    for good (3 full runs of 3 from a fresh clone; never alone). Only KWOK writes these pods'
    status besides the test: a late patch of its own, most likely (not traced)."""

    def completed() -> bool:
        for pod in running(kube):  # the operator may delete one once the job completed
            kube.succeed(NAMESPACE, pod["metadata"]["name"], missing_ok=True)
        return phase(kube, job) == "Completed"

    wait_for(f"{job} Completed", completed)


def running(kube: Kube) -> list[dict[str, Any]]:
    pods = (get(kube, NAMESPACE, "pods") or {}).get("items", [])
    return [p for p in pods if p["status"].get("phase") == "Running"]


def phase(kube: Kube, job: str) -> str:
    found = get(kube, NAMESPACE, "paddlejobs.batch.paddlepaddle.org", job) or {}
    return found.get("status", {}).get("phase", "")


def test_install_needs_a_running_argocd_and_a_folder_paddlegen_argocd_wrote(argocd: Kube, tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "local-cluster"), "install", str(tmp_path)],
        env={**os.environ, "PADDLEGEN_CLUSTER_DIR": str(tmp_path / "none")},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no cluster with Argo CD is running (hack/local-cluster up --with argocd)" in done.stderr
    done = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "local-cluster"), "install", str(tmp_path)],
        env={**os.environ, "PADDLEGEN_CLUSTER_DIR": str(argocd.state)},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"{tmp_path}/patches/argocd-cm-health.yaml: missing" in done.stderr
