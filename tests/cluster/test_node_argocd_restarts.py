"""Group restarts under Argo CD v3.5.1 on the real node (JobSet v0.12.0, the health checks of
`paddlegen argocd`): the JobSet of a `collective-job` with `run.restarts` is a Sync hook, so
a restart of its group is no change Argo CD sees: the Application stays Synced and its sync
keeps waiting on the hook until the job ends. A job that runs out of restarts fails the sync,
Degraded, saying why and after how many restarts, and the JobSet's status and its Job's say
how many attempts, which rank and why."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from paddlegen.workloads.shared.jobset import RESTART_ATTEMPT
from tests.cluster.conftest import Kube, with_extras
from tests.cluster.test_argocd import (
    application,
    init_repo,
    paddlegen,
    render_and_commit,
    wait_running,
    wait_synced,
)
from tests.cluster.test_argocd_loop import operation, results
from tests.cluster.test_node_collective import INDEX
from tests.cluster.test_node_operators import HANG_TIMEOUT, get
from tests.cluster.test_node_restarts import JOBSET_NAME, jobset, restarting
from tests.cluster.test_paddleflow import wait_for
from tests.cluster.training import program
from tests.conftest import require_tool

pytestmark = pytest.mark.node

RECOVERS = "acd-rs-once"  # rank 1 crashes on the first attempt only
GIVES_UP = "acd-rs-always"  # rank 1 crashes at every attempt


@pytest.fixture(scope="module")
def argocd_jobsets(node: Kube) -> Kube:
    require_tool("kustomize")  # the repo-server builds the rendered kustomizations with it
    return with_extras(node, ["jobset", "argocd"])


def test_a_restart_keeps_the_application_synced_and_running_out_fails_the_sync(
    argocd_jobsets: Kube, tmp_path: Path
) -> None:
    kube = argocd_jobsets
    specs: dict[str, dict[str, Any]] = {
        RECOVERS: restarting(RECOVERS, tmp_path / RECOVERS, 1, FAULT_RANK="1",
                             FAULT_STEP="150", FAULT_ATTEMPTS="0", FAULT_CODE="3"),
        GIVES_UP: restarting(GIVES_UP, tmp_path / GIVES_UP, 1, FAULT_RANK="1",
                             FAULT_STEP="30", FAULT_ATTEMPTS="all", FAULT_CODE="3"),
    }  # fmt: skip
    for name in specs:  # the team's namespace and training code, there before the sync
        kube.run("create", "namespace", name)
        kube.run("create", "configmap", "program", "-n", name,
                 f"--from-literal=train.py={program('checkpointed')}")  # fmt: skip
    repo = init_repo(tmp_path / "jobs-repo")
    revision = render_and_commit(repo, {f"{n}.yaml": s for n, s in specs.items()}, "restarts")
    paddlegen(
        "argocd", "--mode", "applications",
        "--deploy", str(repo / "deploy"), "-o", str(repo / "argocd"),
        "--repo-url", f"file://{repo}", "--revision", "main",
        "--dest-server", kube.server,
    )  # fmt: skip
    kube.run(
        "-n", "argocd", "patch", "configmap", "argocd-cm", "--type", "merge",
        "--patch-file", str(repo / "argocd" / "patches" / "argocd-cm-health.yaml"),
    )  # fmt: skip
    for name in specs:
        kube.run("apply", "-f", str(repo / "argocd" / "applications" / f"{name}.yaml"))
    for name in specs:
        wait_running(kube, name, f"jobset.x-k8s.io/JobSet/{name}")

    # The first attempt's crash restarts the group: Argo CD sees no change, the sync still
    # waits on the JobSet, and the job completes on its second attempt.
    wait_for(
        f"{RECOVERS} restarted",
        lambda: jobset(kube, RECOVERS).get("status", {}).get("restarts") == 1,
        timeout=HANG_TIMEOUT,
    )
    app = application(kube, RECOVERS)
    assert app["status"]["sync"]["status"] == "Synced", app["status"]["sync"]
    assert operation(RECOVERS, kube).get("phase") == "Running", operation(RECOVERS, kube)
    wait_synced(kube, RECOVERS, revision)
    assert results(RECOVERS, kube)[("JobSet", RECOVERS)]["hookPhase"] == "Succeeded"

    # The other runs out of restarts: the hook is Degraded, the sync Failed, saying why.
    wait_for(
        f"{GIVES_UP}: sync failed",
        lambda: operation(GIVES_UP, kube).get("phase") == "Failed",
        timeout=HANG_TIMEOUT,
    )
    failed = results(GIVES_UP, kube)[("JobSet", GIVES_UP)]
    assert failed["hookPhase"] == "Failed", failed
    assert failed["message"].startswith(
        "jobset failed due to reaching max number of restarts "
        f"(first failed job: {GIVES_UP}-worker-0) (restarts: 1; worker: 1 failed"
    ), failed
    assert operation(GIVES_UP, kube).get("retryCount", 0) == 0  # nothing runs it again
    assert application(kube, GIVES_UP)["status"]["sync"]["status"] == "Synced"
    # 2 attempts: the first and 1 restart; the JobSet's status says so, and the last
    # attempt's Job which rank and why
    status = jobset(kube, GIVES_UP)["status"]
    (failed,) = [c for c in status["conditions"] if c["type"] == "Failed"]
    assert (status["restarts"], failed["reason"]) == (1, "ReachedMaxRestarts"), status
    job = get(kube, GIVES_UP, "job", f"{GIVES_UP}-worker-0")
    (why,) = [c for c in job["status"]["conditions"] if c["type"] == "Failed"]
    # the first rank the Job controller saw fail: rank 1, or rank 0 if its training process
    # aborted first on losing its peer (gloo on CPU: exit code 250, SIGABRT)
    assert re.search(
        rf"Container paddle for pod {GIVES_UP}/{GIVES_UP}-worker-0-[01]-\S+ failed with exit "
        r"code (3|250) ",
        why["message"],
    ), why
    assert job["metadata"]["labels"][RESTART_ATTEMPT] == "1"
    # rank 1's pod, kept unless the Job controller deleted it as still running when rank 0's
    # failure failed the Job, ended with the fault's exit code
    codes = {
        p["metadata"]["annotations"][INDEX]: c["state"]["terminated"]["exitCode"]
        for p in get(kube, GIVES_UP, "pods", "-l", f"{JOBSET_NAME}={GIVES_UP}")["items"]
        for c in p["status"].get("containerStatuses", [])
        if "terminated" in c["state"]
    }
    assert codes.get("1", 3) == 3, codes
