"""The GitOps loop through the ApplicationSet `paddlegen argocd` writes by default (Argo CD
v3.5.1, `hack/local-cluster --with argocd`), on a `file://` Git repository with three jobs: a
PaddleJob on an NFS PV/PVC (succeeds), a copy of it (fails) and a `distributed-job` with a data
Job. Every generated Application syncs; the objects land wave by wave (the run record, RBAC and
storage, then the data Job, then training, each Sync hook only once the wave before is
healthy); each sync lasts as long as its job runs (paddlegen's health checks in argocd-cm) and
succeeds or fails with it. Then a committed change, per workload, is a new run: the finished
Job, data Job and PaddleJob are deleted and new ones run with the change; a renamed run gets a
new Application from the ApplicationSet, the old one deleted with its Jobs."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.test_argocd import (
    Loop,
    application,
    health,
    init_repo,
    paddlegen,
    wait_running,
    wait_synced,
)
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import EXAMPLES

NAMESPACE = "acd-loop"
PADDLEJOB = "paddlejob-demo-1"  # examples/paddlejob-nfs.yaml: 2 ps + 2 workers on an NFS PV
FAILING = "paddlejob-failing"  # the same job under another name, whose pod fails
DISTRIBUTED = "paddle-cluster-job"  # examples/distributed-hostpath.yaml: data Job, then training
DATA_JOB = f"{DISTRIBUTED}-data"
RENAMED = "paddle-cluster-run-2"  # the distributed job under a new metadata.name: a new run
PADDLEJOBS = "paddlejobs.batch.paddlepaddle.org"


def spec(example: str, name: str | None = None) -> dict[str, Any]:
    found = yaml.safe_load((EXAMPLES / example).read_text())
    found["metadata"]["namespace"] = NAMESPACE
    if name:
        found["metadata"]["name"] = name
    return found


@pytest.fixture(scope="module")
def loop(argocd: Kube, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    repo = init_repo(tmp_path_factory.mktemp("loop") / "jobs-repo")
    specs = {
        "paddlejob-nfs.yaml": spec("paddlejob-nfs.yaml"),
        "paddlejob-failing.yaml": spec("paddlejob-nfs.yaml", FAILING),
        "distributed-hostpath.yaml": spec("distributed-hostpath.yaml"),
    }
    # The team's namespace exists, as it does where a platform team sets quotas and access:
    # three Applications creating one namespace at once (CreateNamespace) race, and the loser's
    # sync fails with "already exists"; paddlegen's Applications do not retry (README).
    argocd.run("create", "namespace", NAMESPACE)
    return Loop(argocd, repo, specs)


@contextmanager
def kwok_paused(kube: Kube) -> Iterator[None]:
    """KWOK stopped (SIGSTOP): pods are bound but never start, so a batch Job does not
    complete and Argo CD stays at its wave."""
    pid = json.loads((kube.state / "cluster.json").read_text())["pids"]["kwok"]
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def operation(app: str, kube: Kube) -> dict[str, Any]:
    return application(kube, app).get("status", {}).get("operationState", {})


def results(app: str, kube: Kube) -> dict[tuple[str, str], dict[str, Any]]:
    """The last sync operation's result per (kind, name)."""
    found = operation(app, kube).get("syncResult", {}).get("resources", [])
    return {(r["kind"], r["name"]): r for r in found}


def sync(kube: Kube, app: str, revision: str) -> None:
    """Start a sync of ``app`` to ``revision`` as `argocd app sync` does: an operation with the
    Application's own sync options."""
    options = application(kube, app)["spec"]["syncPolicy"]["syncOptions"]
    sync = {"revision": revision, "prune": True, "syncOptions": options}
    patch_app(kube, app, {"operation": {"initiatedBy": {"username": "tests"}, "sync": sync}})


def patch_app(kube: Kube, app: str, patch: dict[str, Any]) -> None:
    kube.run(
        "-n", "argocd", "patch", "application", app, "--type", "merge", "-p", json.dumps(patch)
    )  # fmt: skip


def obj(kube: Kube, what: str, name: str) -> dict[str, Any]:
    found = get(kube, NAMESPACE, what, name)
    assert found is not None, f"{what}/{name} not found"
    return found


def created(kube: Kube, what: str, name: str) -> str:
    return obj(kube, what, name)["metadata"]["creationTimestamp"]


def pods(kube: Kube, job: str) -> list[dict[str, Any]]:
    """A PaddleJob's pods (the operator keeps the labels paddlegen gives the template)."""
    selector = f"app.kubernetes.io/instance={job}"
    return (get(kube, NAMESPACE, "pods", "-l", selector) or {}).get("items", [])


def test_the_applicationset_syncs_every_job_wave_by_wave_with_health(loop: Loop) -> None:
    kube = loop.kube
    revision = loop.commit("three jobs")
    # The default mode: one ApplicationSet (git files generator) over deploy/.
    paddlegen(
        "argocd", "--deploy", str(loop.repo / "deploy"), "-o", str(loop.repo / "argocd"),
        "--repo-url", f"file://{loop.repo}", "--revision", "main",
        "--dest-server", kube.server, "--dest-namespace", NAMESPACE,
    )  # fmt: skip
    assert not (loop.repo / "argocd" / "applications").exists()
    apps = sorted([DISTRIBUTED, PADDLEJOB, FAILING])

    with kwok_paused(kube):
        # As a platform team would: the health checks into argocd-cm, the ApplicationSet.
        local_cluster().install(loop.repo / "argocd", kube.state)
        # Wave 0 (the run record, ServiceAccount, Role, RoleBinding) applied and healthy, wave
        # 2 (the data Job, a Sync hook) created; Argo CD waits for the data Job, whose pod
        # cannot run: no training Job.
        wait_running(kube, DISTRIBUTED, f"batch/Job/{DATA_JOB}")
        done = results(DISTRIBUTED, kube)
        assert sorted(done) == [
            ("ConfigMap", f"{DISTRIBUTED}-run"), ("Job", DATA_JOB), ("Role", DISTRIBUTED),
            ("RoleBinding", DISTRIBUTED), ("ServiceAccount", DISTRIBUTED),
        ]  # fmt: skip
        assert {r["syncPhase"] for r in done.values()} == {"Sync"}
        assert done.pop(("Job", DATA_JOB))["hookPhase"] == "Running"
        assert {r["hookPhase"] for r in done.values()} == {"Succeeded"}  # wave 0: healthy
        assert get(kube, NAMESPACE, "jobs", DISTRIBUTED) is None
        # The PaddleJobs, past their PV and PVC (bound), are created: each sync waits for its
        # job, as paddlegen's health check says it runs.
        for app in (PADDLEJOB, FAILING):
            wait_running(kube, app, f"batch.paddlepaddle.org/PaddleJob/{app}")
            assert obj(kube, "pvc", f"{app}-data")["status"]["phase"] == "Bound"

    generated = get(kube, "argocd", "applicationsets", "paddlegen-jobs")["status"]["resources"]
    assert sorted(r["name"] for r in generated) == apps
    # KWOK completes a batch Job's pods by itself: the data Job, then the training Job.
    wait_synced(kube, DISTRIBUTED, revision)
    # Each wave after the one before it was healthy: the data Job completed before training
    # was created; storage and RBAC before what uses them (timestamps have 1 s resolution).
    data_job = obj(kube, "jobs", DATA_JOB)
    assert data_job["status"]["completionTime"] <= created(kube, "jobs", DISTRIBUTED)
    for kind in ("serviceaccounts", "roles", "rolebindings"):
        assert created(kube, kind, DISTRIBUTED) <= data_job["metadata"]["creationTimestamp"]
    for app in (PADDLEJOB, FAILING):
        started = created(kube, PADDLEJOBS, app)
        assert created(kube, "pvc", f"{app}-data") <= started
        assert created(kube, "pv", f"{NAMESPACE}-{app}-data") <= started  # cluster-scoped

    # paddlegen's Lua, run by Argo CD on the hook: the sync succeeds once the pods succeed,
    # and fails, naming the job, once one fails.
    for app in (PADDLEJOB, FAILING):
        wait_for(f"{app}: 4 pods running", lambda job=app: running(kube, job) == 4)
    for pod in pods(kube, PADDLEJOB):
        kube.succeed(NAMESPACE, pod["metadata"]["name"])
    kube.succeed(NAMESPACE, pods(kube, FAILING)[0]["metadata"]["name"], phase="Failed")
    wait_synced(kube, PADDLEJOB, revision)
    wait_for(f"{FAILING}: sync failed", lambda: operation(FAILING, kube).get("phase") == "Failed")
    assert results(FAILING, kube)[("PaddleJob", FAILING)]["hookPhase"] == "Failed"
    assert obj(kube, PADDLEJOBS, FAILING)["status"]["phase"] == "Failed"
    # A hook does not count in the Application's health: the failure is the sync's.
    assert health(application(kube, FAILING)) == "Healthy"
    assert operation(FAILING, kube).get("retryCount", 0) == 0  # no retry runs it again


def running(kube: Kube, job: str) -> int:
    return sum(p["status"].get("phase") == "Running" for p in pods(kube, job))


def test_a_committed_change_per_workload_is_a_new_run(loop: Loop) -> None:
    kube = loop.kube
    old = {
        DISTRIBUTED: obj(kube, "jobs", DISTRIBUTED)["metadata"]["uid"],
        DATA_JOB: obj(kube, "jobs", DATA_JOB)["metadata"]["uid"],
        PADDLEJOB: obj(kube, PADDLEJOBS, PADDLEJOB)["metadata"]["uid"],
    }
    # A new image for the PaddleJob and for the Job's training pods.
    loop.specs["paddlejob-nfs.yaml"]["spec"]["image"] += "-2"
    loop.specs["distributed-hostpath.yaml"]["spec"]["image"] += "-2"
    image = loop.specs["distributed-hostpath.yaml"]["spec"]["image"]
    revision = loop.commit("new images", PADDLEJOB, DISTRIBUTED)

    # The Job: its run record changed, so the sync runs its hooks again: the finished Jobs
    # are deleted (BeforeHookCreation) and new ones run, data preparation first. No refusal
    # of an immutable pod template, no option to set.
    wait_synced(kube, DISTRIBUTED, revision)
    job = obj(kube, "jobs", DISTRIBUTED)
    assert job["metadata"]["uid"] != old[DISTRIBUTED]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == image
    assert obj(kube, "jobs", DATA_JOB)["metadata"]["uid"] != old[DATA_JOB]

    # The PaddleJob: a new one, whose pods carry the new image (the operator never updates a
    # pod, so a change in place would not have reached them).
    def rerun() -> bool:
        found = get(kube, NAMESPACE, PADDLEJOBS, PADDLEJOB) or {}
        return found.get("metadata", {}).get("uid") not in (None, old[PADDLEJOB])

    wait_for(f"{PADDLEJOB} run again", rerun)
    new = obj(kube, PADDLEJOBS, PADDLEJOB)["metadata"]["uid"]

    def run(uid: str) -> list[dict[str, Any]]:
        """The running pods of the PaddleJob ``uid``. The old one, deleted in the background,
        gets pods too before it goes: PaddleFlow v0.3.5 creates missing pods for a job being
        deleted; the garbage collector then deletes them with it."""
        return [
            p
            for p in pods(kube, PADDLEJOB)
            if p["status"].get("phase") == "Running"
            and p["metadata"]["ownerReferences"][0]["uid"] == uid
        ]

    wait_for(f"{PADDLEJOB}: 4 pods running", lambda: len(run(new)) == 4)
    want = loop.specs["paddlejob-nfs.yaml"]["spec"]["image"]
    assert {p["spec"]["containers"][0]["image"] for p in run(new)} == {want}
    for pod in run(new):
        kube.succeed(NAMESPACE, pod["metadata"]["name"])
    wait_synced(kube, PADDLEJOB, revision)

    # Renaming the run: its folder in deploy/ is renamed, so the ApplicationSet makes a new
    # Application (which creates the new Jobs) and deletes the old one, whose resources
    # finalizer deletes the old Jobs.
    loop.specs["distributed-hostpath.yaml"]["metadata"]["name"] = RENAMED
    revision = loop.commit("a new run")
    kube.run(
        "-n", "argocd", "annotate", "applicationset", "paddlegen-jobs",
        "argocd.argoproj.io/application-set-refresh=true", "--overwrite",
    )  # fmt: skip  # the generator polls Git every 3 minutes; a webhook would say so too
    wait_synced(kube, RENAMED, revision)
    assert obj(kube, "jobs", f"{RENAMED}-data")["status"]["completionTime"]
    wait_for(f"{DISTRIBUTED} deleted", lambda: application(kube, DISTRIBUTED) == {})
    for job in (DISTRIBUTED, DATA_JOB):
        assert get(kube, NAMESPACE, "jobs", job) is None, job
