"""`collective-job` (#26) under Argo CD (v3.5.1, `hack/local-cluster --with kwok,argocd`): a
failed rank fails the sync and the Job is Degraded, with Argo CD's built-in Job health (no
health check of paddlegen's). In a module of the Argo CD tests' own (tests/conftest.py runs
them beside the other cluster tests, on a control plane of their own); the pods' statuses are
set as test_collective.py does."""

from __future__ import annotations

from pathlib import Path

from tests.cluster.conftest import Kube
from tests.cluster.test_argocd import (
    application,
    init_repo,
    paddlegen,
    render_and_commit,
    wait_running,
)
from tests.cluster.test_argocd_loop import kwok_paused, operation, results
from tests.cluster.test_collective import condition, fail, spec, wait_pods
from tests.cluster.test_paddleflow import wait_for


def test_under_argo_cd_a_failed_rank_fails_the_sync_and_the_job_is_degraded(
    argocd: Kube, tmp_path: Path
) -> None:
    """Argo CD's own Job health (gitops-engine pkg/health/health_job.go at v3.5.1): the Job's
    Failed condition is Degraded, with its message; the Job is a Sync hook, so the Degraded
    hook fails the sync, and nothing runs it again until its objects change."""
    kube, namespace, name = argocd, "acd-collective", "coll"
    repo = init_repo(tmp_path / "jobs-repo")
    revision = render_and_commit(repo, {"coll.yaml": spec(name, namespace, 2)}, "collective")
    paddlegen(
        "argocd", "--mode", "applications",
        "--deploy", str(repo / "deploy"), "-o", str(repo / "argocd"),
        "--repo-url", f"file://{repo}", "--revision", "main",
        "--dest-server", kube.server, "--dest-namespace", namespace,
    )  # fmt: skip
    with kwok_paused(kube):
        kube.run("apply", "-f", str(repo / "argocd" / "applications" / f"{name}.yaml"))
        wait_running(kube, name, f"batch/Job/{name}")
        # wave 0 first: the Service that names the pods, and the run record
        done = results(name, kube)
        assert done[("Service", name)]["hookPhase"] == "Succeeded"
        pods = wait_pods(kube, namespace, name, 2)
        fail(kube, namespace, pods[1])
        wait_for(
            "the pod failure policy", lambda: condition(kube, namespace, name, "FailureTarget")
        )
    wait_for("the sync Failed", lambda: operation(name, kube).get("phase") == "Failed")
    hook = results(name, kube)[("Job", name)]
    assert hook["hookPhase"] == "Failed"
    assert "failed with exit code 1 matching FailJob rule at index 1" in hook["message"]
    assert operation(name, kube)["syncResult"]["revision"] == revision
    assert condition(kube, namespace, name, "Failed")["reason"] == "PodFailurePolicy"
    assert operation(name, kube).get("retryCount", 0) == 0  # no retry runs it again
    assert application(kube, name)["status"]["sync"]["status"] == "Synced"
