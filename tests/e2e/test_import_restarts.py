"""`paddlegen import` of group restarts (a collective-job's JobSet, a trainjob's own
TrainingRuntime): the same objects again, run.restarts and spec.checkpoint back in the spec."""

from __future__ import annotations

import copy

import pytest
import yaml

from paddlegen.authoring.importer import import_jobs, read_manifests
from paddlegen.cli import cli
from tests.builders import HEADER
from tests.e2e.test_import_roundtrip import (
    as_read_back,
    imported_alike,
    manifests_of,
    read_back_lossless,
)

COMMON = """\
  image: r/llm:v3
  args: [train.py, --epochs, "3"]
  env: [{name: EPOCHS, value: "3"}]
  resources: {requests: {cpu: "2"}, limits: {memory: 8Gi}}
  gpus: 1
  shm: 2Gi
  nodeSelector: {pool: gpu}
  worker: {replicas: 3}
  volumes:
  - name: ckpt
    mountPath: /ckpt
    nfs: {server: nfs.example.com, path: /exports}
    capacity: 100Gi
    accessModes: [ReadWriteMany]
  - {name: data, mountPath: /data, emptyDir: {}}
"""
CASES = {
    "restarts": "  run: {restarts: 3, activeDeadlineSeconds: 3600}\n",
    "checkpoint": "  run: {restarts: 2}\n  checkpoint: {volume: ckpt}\n",
    "checkpoint-path-grace": (
        "  run: {restarts: 1}\n  checkpoint: {volume: ckpt, path: runs/a}\n"
        "  terminationGracePeriodSeconds: 90\n"
    ),
    "volcano": ("  run: {restarts: 2}\n  scheduling: {scheduler: volcano, queue: research}\n"),
    "kueue": "  run: {restarts: 2}\n  scheduling: {kueue: {queue: team-a}}\n",
}
# What a workload's spec gives besides (collective-job: its port, the pods' priority, and
# below its JobSet's time to live).
WORKLOADS = {
    "collective-job": "  collective: {port: 9000}\n  priorityClassName: high\n",
    "trainjob": "",
}


def spec_text(workload: str, case: str) -> str:
    extra = CASES[case]
    if workload == "collective-job" and "run:" in extra:
        extra = extra.replace("run: {", "run: {ttlSecondsAfterFinished: 600, ")
    return (
        HEADER
        + "metadata: {name: llm, namespace: ml, labels: {team: ads}}\n"
        + f"spec:\n  workload: {workload}\n"
        + COMMON
        + WORKLOADS[workload]
        + extra
    )


def rendered(text: str) -> tuple[str, list[dict]]:
    manifests = manifests_of(text)
    return "---\n".join(m.text() for m in manifests), [m.obj for m in manifests]


UID = "0b6f3c1e-5a7d-4c2b-9e51-2f0d8a6b7c31"


def read_back(obj: dict) -> dict:
    """``obj`` as `kubectl get -o yaml` prints it (tests/e2e/test_import_roundtrip.py), and for
    a JobSet or a TrainingRuntime the defaults of their CRDs and of JobSet's webhook
    (sigs.k8s.io/jobset v0.12.0 pkg/webhooks/jobset_webhook.go:112-139), and a JobSet's
    status."""
    out = as_read_back(obj)
    if out["kind"] == "JobSet":
        body = out["spec"]
        body.update(
            successPolicy={"operator": "All"},
            startupPolicy={"startupPolicyOrder": "AnyOrder"},
            suspend=False,
        )
        counts = dict.fromkeys(("ready", "succeeded", "failed", "suspended"), 0)
        out["status"] = {
            "restarts": 1,
            "replicatedJobsStatus": [{"name": "worker", "active": 1, **counts}],
        }
    if out["kind"] in ("JobSet", "TrainingRuntime"):
        body = out["spec"] if out["kind"] == "JobSet" else out["spec"]["template"]["spec"]
        body["failurePolicy"]["restartStrategy"] = "Recreate"
        for job in body["replicatedJobs"]:
            job["groupName"] = "default"
    return out


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("case", CASES)
def test_a_job_with_restarts_comes_back_to_the_same_objects(workload, case):
    text = spec_text(workload, case)
    manifests = manifests_of(text)
    imported = imported_alike(manifests)
    given = yaml.safe_load(text)["spec"]
    spec = imported.spec["spec"]
    assert spec["run"]["restarts"] == given["run"]["restarts"]
    assert spec.get("checkpoint") == given.get("checkpoint")
    assert "trainjob" not in spec  # the job's own runtime, not one of the cluster's
    # (under Volcano the pods' priority is the gang's, which the pods carry: the same objects)
    assert spec.get("scheduling", {}).items() >= given.get("scheduling", {}).items()
    assert spec["env"] == [{"name": "EPOCHS", "value": "3"}]  # no contract, no checkpoint env
    assert read_back_lossless([m.obj for m in manifests], read_back).spec == imported.spec


def test_the_jobset_trainer_makes_for_a_trainjob_is_the_trainjobs_not_a_job():
    """`kubectl get trainjobs,jobsets`: the JobSet Trainer made (owned by its TrainJob, which
    runs Paddle's launcher as a collective-job's does) is no job of its own."""
    stream, _ = rendered(spec_text("trainjob", "restarts"))
    collective, _ = rendered(spec_text("collective-job", "restarts"))
    (made,) = [o for o in yaml.safe_load_all(collective) if o and o["kind"] == "JobSet"]
    made = copy.deepcopy(made)
    made["metadata"]["ownerReferences"] = [
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "llm",
         "uid": UID, "controller": True, "blockOwnerDeletion": True},
    ]  # fmt: skip
    result = import_jobs([("in.yaml", stream + "---\n" + yaml.safe_dump(made))])
    assert [job.label for job in result.jobs] == ["TrainJob/llm"]
    (job,) = result.jobs
    assert job.spec["spec"]["run"]["restarts"] == 3


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_cli_round_trip_through_stdin(runner, tmp_path, workload):
    stream, objects = rendered(spec_text(workload, "checkpoint"))
    back = tmp_path / "back.yaml"
    result = runner.invoke(cli, ["import", "-", "-o", str(back)], input=stream)
    assert result.exit_code == 0, result.output
    wrote, *said = result.stderr.splitlines()
    assert wrote == f"paddlegen: wrote {back}"
    # a spec outside a repository: no modeline; besides, only the new spec's warnings (its NFS
    # checkpoint's root-volume-owner)
    notes = [line for line in said if not line.startswith(f"{back}:")]
    assert [
        line.startswith(f"paddlegen: no yaml-language-server modeline in {back}:") for line in notes
    ] == [True]
    assert all(": warning: " in line for line in said if line not in notes), said
    rendered_again = runner.invoke(cli, ["render", str(back), "--stdout"])
    assert list(read_manifests([("back", rendered_again.stdout)])) == objects


@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_checkpoint_without_restarts_comes_back_as_spec_checkpoint(workload):
    text = spec_text(workload, "checkpoint").replace("restarts: 2", "activeDeadlineSeconds: 60")
    spec = imported_alike(manifests_of(text)).spec["spec"]
    assert (spec["checkpoint"], spec["run"]["activeDeadlineSeconds"]) == ({"volume": "ckpt"}, 60)
    assert "restarts" not in spec["run"] and "env" in spec  # EPOCHS only
    assert not [e for e in spec["env"] if e["name"].startswith("PADDLE_")]
