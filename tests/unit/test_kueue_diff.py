"""gitops/kueue_diff.py: Argo CD ignores what Kueue writes into a queued job, nothing else."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from paddlegen.gitops import argocd
from paddlegen.gitops.kueue_diff import ignore_differences
from tests.conftest import require_tool

QUEUE = {"kueue.x-k8s.io/queue-name": "team-a", "app.kubernetes.io/name": "demo"}


def pod(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "paddle"}], **spec}}


# What Git holds, and what Kueue makes of it once admitted (flavor gpu-a100, its taint).
ADMITTED = {"nodeSelector": {"pool": "a100"}, "tolerations": [{"key": "gpu"}]}
MINE = {"app.kubernetes.io/name": "demo"}
OURS_AND_KUEUES = {**MINE, "kueue.x-k8s.io/podset": "main"}
CASES = {
    "Job": (
        {"metadata": {"labels": QUEUE}, "spec": {"template": pod(MINE)}},
        {
            "metadata": {"labels": QUEUE},
            "spec": {"suspend": False, "template": pod(OURS_AND_KUEUES, **ADMITTED)},
        },
    ),
    "PaddleJob": (
        {
            "metadata": {"labels": QUEUE},
            "spec": {
                "runPolicy": {"cleanPodPolicy": "None"},
                "paddleReplicaSpecs": {"Worker": {"template": pod(MINE)}},
            },
        },
        {
            "metadata": {"labels": QUEUE},
            "spec": {
                "runPolicy": {"cleanPodPolicy": "None", "suspend": False},
                "paddleReplicaSpecs": {"Worker": {"template": pod(OURS_AND_KUEUES, **ADMITTED)}},
            },
        },
    ),
    "JobSet": (
        {
            "metadata": {"labels": QUEUE},
            "spec": {
                "failurePolicy": {"maxRestarts": 3},
                "replicatedJobs": [
                    {"name": "worker", "template": {"spec": {"template": pod(MINE)}}}
                ],
            },
        },
        {
            "metadata": {"labels": QUEUE},
            "spec": {
                "suspend": False,
                "failurePolicy": {"maxRestarts": 3},
                "replicatedJobs": [
                    {
                        "name": "worker",
                        "template": {"spec": {"template": pod(OURS_AND_KUEUES, **ADMITTED)}},
                    }
                ],
            },
        },
    ),
    "TrainJob": (
        {"metadata": {"labels": QUEUE}, "spec": {"runtimePatches": [{"manager": "paddlegen"}]}},
        {
            "metadata": {"labels": QUEUE},
            "spec": {
                "suspend": False,
                "runtimePatches": [
                    {"manager": "paddlegen"},
                    {"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {}},
                ],
            },
        },
    ),
}


def normalized(kind: str, obj: dict[str, Any]) -> Any:
    """``obj`` as Argo CD compares it: each expression deleted (`del(<expression>)`)."""
    (entry,) = [e for e in ignore_differences() if e["kind"] == kind]
    program = " | ".join(f"del({e})" for e in entry["jqPathExpressions"])
    jq = require_tool("jq")
    out = subprocess.run([jq, "-c", program], input=json.dumps(obj), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("kind", CASES)
def test_an_admitted_job_reads_as_what_git_holds(kind):
    git, live = CASES[kind]
    assert normalized(kind, live) == normalized(kind, git)


@pytest.mark.parametrize("kind", CASES)
def test_a_job_outside_any_queue_keeps_every_field_compared(kind):
    _, live = CASES[kind]
    unqueued = json.loads(json.dumps(live).replace("kueue.x-k8s.io/queue-name", "team"))
    if kind == "TrainJob":  # but the runtime patch Kueue's webhook gives every TrainJob
        kueues = unqueued["spec"]["runtimePatches"].pop()
        assert kueues["manager"] == "kueue.x-k8s.io/manager"
    assert normalized(kind, unqueued) == unqueued


def test_the_runtime_patch_kueue_gives_an_unqueued_trainjob_is_ignored():
    git = {"metadata": {"labels": MINE}, "spec": {"runtimePatches": [{"manager": "paddlegen"}]}}
    live = json.loads(json.dumps(git))
    live["spec"]["runtimePatches"].append({"manager": "kueue.x-k8s.io/manager"})
    assert normalized("TrainJob", live) == normalized("TrainJob", git)
    live["spec"]["runtimePatches"][0]["trainingRuntimeSpec"] = {}  # paddlegen's own: compared
    assert normalized("TrainJob", live) != normalized("TrainJob", git)


def test_a_change_of_the_users_own_pod_labels_is_still_a_difference():
    git, live = CASES["Job"]
    live["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] = "other"
    assert normalized("Job", live) != normalized("Job", git)


def test_every_application_ignores_them_and_syncs_respecting_it():
    target = argocd.Target(repo_url="https://git.example/jobs.git")
    for spec in (
        argocd._app_spec(target, argocd.IN_CLUSTER, "team-a", "deploy/demo"),
        argocd._appset(target, None, "demo", [[]])["spec"]["template"]["spec"],
    ):
        assert spec["ignoreDifferences"] == ignore_differences()
        assert "RespectIgnoreDifferences=true" in spec["syncPolicy"]["syncOptions"]
    assert {(e["group"], e["kind"]) for e in ignore_differences()} == {
        ("batch", "Job"),
        ("jobset.x-k8s.io", "JobSet"),
        ("trainer.kubeflow.org", "TrainJob"),
        ("kubeflow.org", "PaddleJob"),
    }
