"""Argo CD v3.5.1 waits on a TrainJob as on the other workloads' jobs: with the health checks
`paddlegen argocd` writes into argocd-cm (Argo CD ships none for TrainJob), the sync of a
`trainjob` lasts while Trainer's JobSet runs its ranks (the TrainJob is a Sync hook), succeeds
once every rank has, and fails, naming the TrainJob and its ranks' counts, once one rank fails.
Live: Trainer v2.3.0 and JobSet v0.12.0 make the ranks, KWOK runs them, the tests end them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd import Loop, init_repo, paddlegen, wait_running, wait_synced
from tests.cluster.test_argocd_loop import kwok_paused, operation, results
from tests.cluster.test_collective import fail
from tests.cluster.test_paddleflow import get, wait_for
from tests.cluster.test_trainjob import install_runtimes, spec, wait_ranks

NAMESPACE = "acd-trainjob"
DONE = "resnet-done"  # every rank succeeds
FAILING = "resnet-failing"  # rank 1 fails
NODES = 2


@pytest.fixture(scope="module")
def loop(argocd: Kube, tmp_path_factory: pytest.TempPathFactory) -> Loop:
    with_extras(argocd, ["jobset", "trainer"])
    install_runtimes(argocd)
    argocd.run("create", "namespace", NAMESPACE)  # the team's, as in test_argocd_loop
    repo = init_repo(tmp_path_factory.mktemp("trainjob") / "jobs-repo")
    return Loop(argocd, repo, {f"{n}.yaml": spec(n, NAMESPACE, NODES) for n in (DONE, FAILING)})


def trainjob(kube: Kube, name: str) -> dict[str, Any]:
    found = get(kube, NAMESPACE, "trainjobs.trainer.kubeflow.org", name)
    assert found is not None, f"trainjob/{name} not found"
    return found


def test_a_trainjobs_sync_lasts_while_it_trains_and_ends_as_it_did(loop: Loop) -> None:
    kube = loop.kube
    revision = loop.commit("two trainjobs")
    paddlegen(
        "argocd", "--mode", "applications",
        "--deploy", str(loop.repo / "deploy"), "-o", str(loop.repo / "argocd"),
        "--repo-url", f"file://{loop.repo}", "--revision", "main",
        "--dest-server", kube.server, "--dest-namespace", NAMESPACE,
    )  # fmt: skip
    kube.run(
        "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "merge",
        "--patch-file", str(loop.repo / "argocd" / "patches" / "argocd-cm-health.yaml"),
    )  # fmt: skip
    ranks = {}
    with kwok_paused(kube):  # the ranks stay as the tests set them: KWOK would complete them
        for app in (DONE, FAILING):
            kube.run("apply", "-f", str(loop.repo / "argocd" / "applications" / f"{app}.yaml"))
        # Each sync waits on its TrainJob while its ranks exist and have not ended.
        for app in (DONE, FAILING):
            wait_running(kube, app, f"trainer.kubeflow.org/TrainJob/{app}")
            ranks[app] = wait_ranks(kube, NAMESPACE, app, NODES)
            annotations = trainjob(kube, app)["metadata"]["annotations"]
            tracking = annotations["argocd.argoproj.io/tracking-id"]
            assert tracking.startswith(f"{app}:trainer.kubeflow.org/TrainJob:"), tracking
            assert operation(app, kube).get("phase") == "Running"
        # Every rank of one succeeds; rank 1 of the other exits 1, which the runtime's pod
        # failure policy makes the end of its Job, JobSet and TrainJob.
        for pod in ranks[DONE]:
            kube.succeed(NAMESPACE, pod["metadata"]["name"])
        fail(kube, NAMESPACE, ranks[FAILING][1])
        wait_synced(kube, DONE, revision)
    assert results(DONE, kube)[("TrainJob", DONE)]["hookPhase"] == "Succeeded"
    # The failed one's sync fails, with the TrainJob's message and its ranks' counts.
    wait_for(f"{FAILING}: sync failed", lambda: operation(FAILING, kube).get("phase") == "Failed")
    failed = results(FAILING, kube)[("TrainJob", FAILING)]
    assert failed["hookPhase"] == "Failed", failed
    assert failed["message"] == (
        "jobset failed due to one or more job failures "
        f"(first failed job: {FAILING}-node-0) (node: 1 failed)"
    )
    assert operation(FAILING, kube).get("retryCount", 0) == 0  # no retry trains it again
    conditions = {c["type"]: c["status"] for c in trainjob(kube, FAILING)["status"]["conditions"]}
    assert conditions.get("Failed") == "True", conditions
