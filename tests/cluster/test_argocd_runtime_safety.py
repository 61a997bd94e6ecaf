"""Run-time safety under Argo CD v3.5.1 with the real controllers (`hack/local-cluster --with
kwok,volcano,paddle-operator,training-operator,argocd`), on a `file://` Git repository and the
Applications `paddlegen argocd` writes: what runs (the data Job, the training object) is an Argo
CD Sync hook beside a run record (paddlegen/render/syncwaves.py), so

- a failed data Job stops training for every sync, automated or by hand, until a commit
  changes the job;
- a finished job never runs again: deleted by its TTL or by hand, refreshed, with a commit of
  something else, no Job and no pod comes back (a sync by hand runs it again, on purpose);
- a change to a PaddleJob reaches its pods, as a new run once the running one ended;
- a crash-looping Kubeflow trainer fails its job (runPolicy.backoffLimit) and the sync;
- and, without Argo CD, the PaddleFlow operator creates a completed job's lost pod again unless
  its cleanPodPolicy cleaned them (the `paddlejob-clean-pod-policy` warning)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests import builders
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_argocd import (
    Loop,
    application,
    git,
    init_repo,
    paddlegen,
    refresh,
    wait_synced,
)
from tests.cluster.test_argocd_loop import kwok_paused, operation, results, sync
from tests.cluster.test_paddleflow import get, wait_for
from tests.helpers import paddlegen_of, release

NAMESPACE = "acd-safety"
PADDLEJOBS = "paddlejobs.batch.paddlepaddle.org"
KUBEFLOW = "paddlejobs.kubeflow.org"
LIMITS = {"limits": {"memory": "1Gi"}}
DATA_VOLUME = [{"name": "data", "mountPath": "/data", "hostPath": {"path": "/srv/safety"}}]


@pytest.fixture(scope="module")
def loop(kube: Kube, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    cluster = with_extras(
        kube, ["kwok", "volcano", "paddle-operator", "training-operator", "argocd"]
    )
    cluster.run("create", "namespace", NAMESPACE)  # as test_argocd_loop says why
    return Loop(cluster, init_repo(tmp_path_factory.mktemp("safety") / "jobs-repo"), {})


def spec(name: str, workload: str = "job", **fields: Any) -> dict[str, Any]:
    given = {"image": "img:1", "resources": LIMITS, **fields}
    return builders.spec(workload, metadata={"name": name, "namespace": NAMESPACE}, **given)


def install(loop: Loop) -> None:
    """`paddlegen argocd --mode applications` for every job so far, installed as a platform
    team would (health checks into argocd-cm, then the Applications)."""
    paddlegen(
        "argocd", "--mode", "applications", "--deploy", str(loop.repo / "deploy"),
        "-o", str(loop.repo / "argocd"), "--repo-url", f"file://{loop.repo}",
        "--revision", "main", "--dest-server", loop.kube.server,
    )  # fmt: skip
    local_cluster().install(loop.repo / "argocd", loop.kube.state)
    # A hard refresh, as the commit's Git webhook would send: the repo server caches what a
    # branch resolves to for 3 minutes (reposerver/cache/cache.go:70,230 at v3.5.1), so a new
    # Application in a repository resolved less than that ago would sync the older commit.
    for spec in loop.specs.values():
        refresh(loop.kube, spec["metadata"]["name"])


def pods(kube: Kube, selector: str) -> list[dict[str, Any]]:
    return (get(kube, NAMESPACE, "pods", "-l", selector) or {}).get("items", [])


def running(kube: Kube, selector: str) -> list[dict[str, Any]]:
    return [p for p in pods(kube, selector) if p["status"].get("phase") == "Running"]


def finish(kube: Kube, selector: str, count: int = 1, phase: str = "Succeeded") -> None:
    """Wait for ``count`` running pods of ``selector``, then end them with ``phase``."""
    wait_for(f"{count} pods {selector} running", lambda: len(running(kube, selector)) == count)
    for pod in running(kube, selector):
        kube.succeed(NAMESPACE, pod["metadata"]["name"], phase=phase)


def fail_data_job(kube: Kube, job: str) -> None:
    """With KWOK paused: mark the data Job's pod Failed once the scheduler placed it, and wait
    for the Job controller to count the failure (KWOK's default stages, resumed, would start
    the pod again and make it succeed)."""
    fail_scheduled_pod(kube, f"job-name={job}")

    def failed() -> bool:
        conditions = (get(kube, NAMESPACE, "jobs", job) or {}).get("status", {}).get("conditions")
        return any(c["type"] == "Failed" and c["status"] == "True" for c in conditions or [])

    wait_for(f"{job} Failed", failed)


def fail_scheduled_pod(kube: Kube, selector: str) -> None:
    """Mark the first pod of ``selector`` that the scheduler placed Failed."""

    def placed() -> list[dict[str, Any]]:
        return [p for p in pods(kube, selector) if p["spec"].get("nodeName")]

    pod = wait_for(f"a pod {selector} placed", placed)[0]
    status = {"phase": "Failed", "podIP": "10.99.0.1", "podIPs": [{"ip": "10.99.0.1"}]}
    kube.run(
        "patch", "pod", "-n", NAMESPACE, pod["metadata"]["name"], "--subresource=status",
        "--type=merge", "-p", json.dumps({"status": status}),
    )  # fmt: skip


def uid(kube: Kube, what: str, name: str) -> str | None:
    found = get(kube, NAMESPACE, what, name)
    return found["metadata"]["uid"] if found else None


def settle(kube: Kube, app: str, revision: str) -> None:
    """A hard refresh of ``app``, waited for: compared again at ``revision``, and Synced."""
    last = application(kube, app)["status"].get("reconciledAt")

    def compared() -> bool:
        status = application(kube, app)["status"]
        if status.get("reconciledAt") == last:
            if "argocd.argoproj.io/refresh" not in application(kube, app)["metadata"].get(
                "annotations", {}
            ):
                refresh(kube, app)
            return False
        return (status["sync"]["status"], status["sync"].get("revision")) == ("Synced", revision)

    wait_for(f"{app} compared again at {revision[:7]} and Synced", compared)


def test_a_failed_data_job_stops_training_until_a_commit_fixes_it(loop: Loop) -> None:
    kube, job = loop.kube, "prep-fails"
    data = f"{job}-data"
    loop.specs[f"{job}.yaml"] = spec(
        job,
        command=["python3", "train.py"],
        volumes=DATA_VOLUME,
        dataPrep={"volume": "data", "command": ["python3", "prep.py"], "backoffLimit": 0},
    )
    with kwok_paused(kube):
        first = loop.commit("a job whose data preparation fails")
        install(loop)
        fail_data_job(kube, data)

    # The sync fails at the data Job's wave, saying which Job and why; no retry, no training.
    wait_for("the sync failed", lambda: operation(job, kube).get("phase") == "Failed")
    failed = results(job, kube)[("Job", data)]
    assert failed["hookPhase"] == "Failed", failed
    assert "backoff limit" in failed["message"], failed
    assert operation(job, kube).get("retryCount", 0) == 0
    assert get(kube, NAMESPACE, "jobs", job) is None
    # The run record was applied first: the Application is Synced, so neither self-heal nor a
    # later commit of another job runs it again.
    for _ in range(2):
        settle(kube, job, first)
    assert get(kube, NAMESPACE, "jobs", job) is None

    # A sync by hand of the same revision runs the data Job again, not training.
    before = uid(kube, "jobs", data)
    with kwok_paused(kube):
        sync(kube, job, first)
        wait_for("a new data Job", lambda: uid(kube, "jobs", data) not in (None, before))
        fail_data_job(kube, data)
    wait_for("the sync failed again", lambda: operation(job, kube).get("phase") == "Failed")
    assert get(kube, NAMESPACE, "jobs", job) is None

    # A commit that fixes the data preparation changes the run record: the automated sync
    # runs the data Job, then training (KWOK completes a Job's pods by itself).
    loop.specs[f"{job}.yaml"]["spec"]["dataPrep"]["command"] = ["python3", "prep.py", "--fixed"]
    before = uid(kube, "jobs", data)
    fixed = loop.commit("fix the data preparation", job)
    wait_for("the fixed data Job", lambda: uid(kube, "jobs", data) not in (None, before))
    wait_synced(kube, job, fixed)
    assert created(kube, job) >= get(kube, NAMESPACE, "jobs", data)["status"]["completionTime"]
    done = results(job, kube)
    assert (done[("Job", data)]["hookPhase"], done[("Job", job)]["hookPhase"]) == (
        "Succeeded",
        "Succeeded",
    )


def test_a_finished_job_never_runs_again(loop: Loop) -> None:
    kube = loop.kube
    jobs = {"ttl-job": {"ttlSecondsAfterFinished": 3}, "kept-job": {}}  # deleted by hand
    for job, run in jobs.items():
        loop.specs[f"{job}.yaml"] = spec(job, command=["python3", "train.py"], run=run)
    revision = loop.commit("two jobs")
    install(loop)
    for job in jobs:  # KWOK completes a Job's pods by itself
        wait_synced(kube, job, revision)
    history = {job: len(application(kube, job)["status"]["history"]) for job in jobs}
    ran = {job: uid(kube, "jobs", job) for job in jobs}

    kube.run("-n", NAMESPACE, "delete", "job", "kept-job")
    for job in jobs:  # the TTL controller deletes the other (Argo CD's hook finalizer is off)
        wait_for(f"{job} deleted", lambda j=job: get(kube, NAMESPACE, "jobs", j) is None)

    # Two hard refreshes, then a commit of something else: nothing runs again.
    for _ in range(2):
        for job in jobs:
            settle(kube, job, revision)
    (loop.repo / "NOTES.md").write_text("an unrelated change\n")
    git(loop.repo, "add", "-A")
    git(loop.repo, "commit", "-q", "-m", "an unrelated commit")
    unrelated = git(loop.repo, "rev-parse", "HEAD")
    for job in jobs:
        settle(kube, job, unrelated)
        assert get(kube, NAMESPACE, "jobs", job) is None, job
        assert pods(kube, f"job-name={job}") == [], job
        assert len(application(kube, job)["status"]["history"]) == history[job]

    # To run a finished job again on purpose: a sync by hand.
    sync(kube, "kept-job", unrelated)
    wait_for("kept-job again", lambda: uid(kube, "jobs", "kept-job") not in (None, ran["kept-job"]))
    wait_synced(kube, "kept-job", unrelated)


def test_a_new_paddlegen_runs_no_finished_job_again(loop: Loop, tmp_path: Path) -> None:
    """A release that renders a job differently (a new default in a copy of the package, and
    a new version) re-renders the repository without changing the job: its Application is
    compared at the new commit and stays Synced, with no new run. A change of the spec then
    runs it once, with the new rendering."""
    kube, job = loop.kube, "upgraded-job"
    loop.specs[f"{job}.yaml"] = spec(job, command=["python3", "train.py"])
    revision = loop.commit("a job")
    install(loop)
    wait_synced(kube, job, revision)  # KWOK completes its pod
    runs = len(application(kube, job)["status"]["history"])
    ran = uid(kube, "jobs", job)

    new = release(tmp_path, "0.2.0")
    done = paddlegen_of(new, loop.repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    assert "the files paddlegen 0.1.0 wrote" in done.stderr and job in done.stderr
    assert git(loop.repo, "status", "--porcelain", f"deploy/{job}") == ""  # not a byte changed
    git(loop.repo, "add", "-A")  # other jobs' stamps, where the release renders the same files
    git(loop.repo, "commit", "-q", "--allow-empty", "-m", "re-rendered by paddlegen 0.2.0")
    released = git(loop.repo, "rev-parse", "HEAD")
    settle(kube, job, released)  # a hard refresh, compared at the new commit: Synced
    assert uid(kube, "jobs", job) == ran
    assert len(application(kube, job)["status"]["history"]) == runs

    loop.specs[f"{job}.yaml"]["spec"]["env"] = [{"name": "EPOCHS", "value": "2"}]
    spec_file = loop.repo / "jobs" / f"{job}.yaml"
    spec_file.write_text(yaml.safe_dump(loop.specs[f"{job}.yaml"], sort_keys=False))
    done = paddlegen_of(new, loop.repo, "render", "jobs", "-o", "deploy")
    assert done.returncode == 0, done.stderr
    rendered = (loop.repo / "deploy" / job / f"batch_v1_job_{job}.yaml").read_text()
    assert "suspend: false" in rendered  # the changed spec takes the release's rendering
    git(loop.repo, "add", "-A")
    git(loop.repo, "commit", "-q", "-m", "a changed spec")
    changed = git(loop.repo, "rev-parse", "HEAD")
    refresh(kube, job)
    wait_for("the changed job's run", lambda: uid(kube, "jobs", job) not in (None, ran))
    wait_synced(kube, job, changed)
    assert len(application(kube, job)["status"]["history"]) == runs + 1


def test_a_change_to_a_paddlejob_reaches_its_pods_as_a_new_run(loop: Loop) -> None:
    kube, job = loop.kube, "pj-change"
    selector = f"app.kubernetes.io/instance={job}"
    loop.specs[f"{job}.yaml"] = spec(
        job, "paddlejob", worker={"replicas": 2}, paddlejob={"cleanPodPolicy": "OnCompletion"}
    )
    first = loop.commit("a PaddleJob")
    install(loop)
    wait_for("2 pods running", lambda: len(running(kube, selector)) == 2)
    old = uid(kube, PADDLEJOBS, job)
    # The run is the sync: Argo CD waits for the PaddleJob (paddlegen's health check).
    waiting = f"waiting for completion of hook batch.paddlepaddle.org/PaddleJob/{job}"
    wait_for(waiting, lambda: operation(job, kube).get("message") == waiting)

    # A new image while it runs: the running job is left alone, the change waits its turn.
    loop.specs[f"{job}.yaml"]["spec"]["image"] = "img:2"
    second = loop.commit("a new image", job)
    for _ in range(2):
        refresh(kube, job)
        assert operation(job, kube)["syncResult"]["revision"] == first
        assert uid(kube, PADDLEJOBS, job) == old
        assert {images(p) for p in running(kube, selector)} == {"img:1"}

    # Once it ended, the change runs: a new PaddleJob whose pods carry the new image.
    finish(kube, selector, count=2)
    wait_for("a new PaddleJob", lambda: uid(kube, PADDLEJOBS, job) not in (None, old))
    wait_for("2 new pods running", lambda: len(running(kube, selector)) == 2)
    assert {images(p) for p in running(kube, selector)} == {"img:2"}
    finish(kube, selector, count=2)
    wait_synced(kube, job, second)


def created(kube: Kube, job: str) -> str:
    return get(kube, NAMESPACE, "jobs", job)["metadata"]["creationTimestamp"]


def images(pod: dict[str, Any]) -> str:
    return ",".join(c["image"] for c in pod["spec"]["containers"])


def test_a_crash_looping_kubeflow_trainer_fails_the_job_and_the_sync(loop: Loop) -> None:
    """training-operator counts a running pod's container restarts against
    runPolicy.backoffLimit (v1.9.0 pkg/core/job.go:95-133), which paddlegen now sets (6, as a
    Job's default): without it the trainer would restart in place for ever. A collective job's
    workers restart only when the spec asks (restartPolicy OnFailure; paddlegen's is Never)."""
    kube, job = loop.kube, "kf-crash"
    loop.specs[f"{job}.yaml"] = spec(
        job, "kubeflow-paddlejob", worker={"replicas": 1}, run={"restartPolicy": "OnFailure"}
    )
    loop.commit("a Kubeflow PaddleJob")
    install(loop)
    created = wait_for("the PaddleJob", lambda: get(kube, NAMESPACE, KUBEFLOW, job))
    assert created["spec"]["runPolicy"]["backoffLimit"] == 6
    selector = f"training.kubeflow.org/job-name={job}"
    (pod,) = wait_for("its pod running", lambda: running(kube, selector))
    # The kubelet's record of a container that crashed and restarted six times.
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {
        "name": "paddle",
        "image": "img:1",
        "imageID": "",
        "ready": True,
        "restartCount": 6,
        "state": {"running": {"startedAt": now}},
    }
    kube.run(
        "patch", "pod", "-n", NAMESPACE, pod["metadata"]["name"], "--subresource=status",
        "--type=merge", "-p", json.dumps({"status": {"containerStatuses": [status]}}),
    )  # fmt: skip

    def failed() -> bool:
        found = get(kube, NAMESPACE, KUBEFLOW, job) or {}
        conditions = found.get("status", {}).get("conditions", [])
        return any(c["type"] == "Failed" and c["status"] == "True" for c in conditions)

    wait_for("the job Failed", failed)
    wait_for("the sync failed", lambda: operation(job, kube).get("phase") == "Failed")
    result = results(job, kube)[("PaddleJob", job)]
    assert result["hookPhase"] == "Failed", result
    assert "backoff limit" in result["message"].lower(), result


@pytest.mark.parametrize(("policy", "comes_back"), [("Never", True), ("OnCompletion", False)])
def test_paddleflow_creates_a_lost_pod_of_a_completed_job_again_unless_cleaned(
    loop: Loop, policy: str, comes_back: bool
) -> None:
    """paddle-operator v0.3.5 without Argo CD: what `paddlejob-clean-pod-policy` warns of."""
    kube = loop.kube
    job = f"pods-{policy.lower()}"
    data = spec(job, "paddlejob", worker={"replicas": 2}, paddlejob={"cleanPodPolicy": policy})
    rendered = build.render_document(parse_spec(yaml.safe_dump(data).encode(), f"{job}.yaml"))
    kube.apply(build.manifest_stream([rendered]))
    selector = f"app.kubernetes.io/instance={job}"
    finish(kube, selector, count=2)

    def completed() -> bool:
        found = get(kube, NAMESPACE, PADDLEJOBS, job) or {}
        return found.get("status", {}).get("phase") == "Completed"

    wait_for("Completed", completed)
    if comes_back:
        lost = pods(kube, selector)[0]
        kube.run("-n", NAMESPACE, "delete", "pod", lost["metadata"]["name"], "--wait=false")

        def recreated() -> bool:
            again = get(kube, NAMESPACE, "pods", lost["metadata"]["name"]) or {}
            return again.get("metadata", {}).get("uid") not in (None, lost["metadata"]["uid"])

        wait_for("the lost pod created again", recreated)  # and it would train again
    else:
        wait_for("its pods cleaned", lambda: pods(kube, selector) == [])
