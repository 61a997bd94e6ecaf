"""paddlegen/render/syncwaves.py: what runs is an Argo CD Sync hook, and the run record's digest
changes exactly when what runs does (live proof: tests/cluster/test_argocd_runtime_safety.py)."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from paddlegen.pipeline import build
from paddlegen.render.engine import Manifest
from paddlegen.render.syncwaves import HOOK, HOOK_DELETE_POLICY, WAVE, annotate
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.objects import JOBSET

BODY = """\
apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {{name: demo, namespace: ml}}
spec:
  workload: {workload}
  image: img:1
  resources: {{limits: {{memory: 1Gi}}}}
  volumes: [{{name: data, mountPath: /data, nfs: {{server: 10.0.0.1, path: /x}}, capacity: 1Gi}}]
  dataPrep: {{volume: data}}
{extra}"""
RUNS = {
    "job": [("Job", "demo-data"), ("Job", "demo")],
    "paddlejob": [("Job", "demo-data"), ("PaddleJob", "demo")],
    "kubeflow-paddlejob": [("Job", "demo-data"), ("PaddleJob", "demo")],
    # its headless Service is compared, in wave 0, and stays between runs
    "collective-job": [("Job", "demo-data"), ("Job", "demo")],
}
EXTRA = {"collective-job": "  args: [train.py]\n"}
JOB = BODY.format(workload="job", extra="")


def manifests(text: str, **kwargs):
    return build.render_document(parse_spec(text.encode(), "demo.yaml"), **kwargs).manifests


def record(text: str) -> dict:
    (found,) = [m.obj for m in manifests(text) if m.kind == "ConfigMap"]
    return found


@pytest.mark.parametrize("workload", sorted(RUNS))
def test_what_runs_is_a_sync_hook_and_the_rest_is_compared(workload):
    found = manifests(BODY.format(workload=workload, extra=EXTRA.get(workload, "")))
    hooks = [(m.kind, m.name) for m in found if HOOK in m.obj["metadata"]["annotations"]]
    assert hooks == RUNS[workload]
    for m in found:
        annotations = m.obj["metadata"]["annotations"]
        if (m.kind, m.name) in hooks:
            assert annotations[HOOK] == "Sync"
            assert annotations[HOOK_DELETE_POLICY] == "BeforeHookCreation"
            assert annotations[WAVE] == ("2" if m.name == "demo-data" else "3")
        else:  # the PV, the PVC, a Service and the run record, all before the hooks
            assert annotations[WAVE] == "0", m.kind


def test_the_run_record_names_what_runs_and_comes_last_in_apply_order():
    found = manifests(JOB)
    last = found[-1].obj
    assert (last["kind"], last["metadata"]["name"]) == ("ConfigMap", "demo-run")
    assert last["metadata"]["namespace"] == "ml"
    assert last["data"]["objects"] == "Job/demo-data\nJob/demo\n"
    assert last["data"]["digest"].startswith("sha256:") and len(last["data"]["digest"]) == 71
    assert last["metadata"]["labels"] == found[-2].obj["metadata"]["labels"]


def test_the_digest_follows_what_runs_and_nothing_else():
    base = record(JOB)["data"]["digest"]
    # a comment and the key order of the spec: the same objects, the same digest
    reordered = JOB.replace(
        "  image: img:1\n  resources: {limits: {memory: 1Gi}}\n",
        "  # a comment\n  resources: {limits: {memory: 1Gi}}\n  image: img:1\n",
    )
    assert record(reordered)["data"]["digest"] == base
    # what runs changes: its env, or the data Job's work
    for change in ("volume: data}\n  env: [{name: A, value: '1'}]", "volume: data, splitCount: 3}"):
        assert record(JOB.replace("volume: data}", change))["data"]["digest"] != base, change
    # a change to the PV alone is compared by Argo CD itself: the digest stays
    bigger = JOB.replace("capacity: 1Gi", "capacity: 2Gi")
    assert record(bigger)["data"]["digest"] == base


def test_an_environment_patches_the_digest_of_its_run(tmp_path):
    spec = tmp_path / "demo.yaml"
    spec.write_text(
        BODY.format(workload="job", extra="overlays:\n  prod: {spec: {image: img:2}}\n")
    )
    (rendered,) = build.render_specs([spec])
    patch = yaml.safe_load(rendered.plan["overlays/prod/patch-v1_configmap_demo-run.yaml"])
    base = yaml.safe_load(rendered.plan["base/v1_configmap_demo-run.yaml"])
    digest = patch["data"]["digest"]
    assert patch == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "demo-run"},
        "data": {"digest": digest},
    }
    assert digest != base["data"]["digest"]


def test_without_argo_cd_annotations_there_is_no_hook_and_no_record():
    found = manifests(JOB, argocd=False)
    assert [m.kind for m in found] == ["PersistentVolume", "PersistentVolumeClaim", "Job", "Job"]
    assert all("annotations" not in m.obj["metadata"] for m in found)


def test_any_of_the_workloads_objects_is_a_sync_hook(monkeypatch):
    """A workload that renders either of two kinds, as its spec says, lists both: whichever
    it renders runs as a hook."""
    w = WORKLOADS["collective-job"]
    monkeypatch.setitem(WORKLOADS, w.name, dataclasses.replace(w, objects=(*w.objects, JOBSET)))
    metadata = {"name": "demo", "labels": {"app.kubernetes.io/name": "demo"}}
    service = Manifest({"apiVersion": "v1", "kind": "Service", "metadata": metadata}, "s")
    jobset = Manifest(
        {"apiVersion": JOBSET.api_version, "kind": JOBSET.kind, "metadata": metadata},
        "collective-job/jobset.yaml.j2",
    )
    found = annotate("demo", w.name, [service, jobset])
    assert [m.kind for m in found if HOOK in m.obj["metadata"]["annotations"]] == ["JobSet"]
    # a workload that does not list it compares it instead
    found = annotate("demo", "paddlejob", [jobset])
    assert [m.kind for m in found if HOOK in m.obj["metadata"]["annotations"]] == []
