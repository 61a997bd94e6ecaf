"""Facts about the `job` workload (seed 000) that a snapshot update must not silently change."""

from __future__ import annotations

import pytest
import yaml

from paddlegen.pipeline import build
from tests.builders import HEADER, kueue_spec, render_file, rendered_objects, spec
from tests.conftest import EXAMPLES


def render(tmp_path, body: str) -> dict[str, dict]:
    plan = render_file(tmp_path, HEADER + body).plan
    return {path: yaml.safe_load(text) for path, text in plan.items()}


def test_quickstart_reproduces_the_seed_job():
    (rendered,) = build.render_specs([EXAMPLES / "quickstart.yaml"])
    assert list(rendered.plan) == [
        "kustomization.yaml",
        "batch_v1_job_quickstart.yaml",
        "v1_configmap_quickstart-run.yaml",
    ]
    job = yaml.safe_load(rendered.plan["batch_v1_job_quickstart.yaml"])
    assert (job["apiVersion"], job["kind"], job["metadata"]["name"]) == (
        "batch/v1",
        "Job",
        "quickstart",
    )
    assert job["spec"]["parallelism"] == 1 and job["spec"]["completions"] == 1
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["name"] == "paddle"
    assert container["image"] == "mypaddle/paddle:quickstart"
    assert container["command"] == ["bin/bash", "-c", "/root/paddle/demo/quick_start/train.sh"]
    assert pod["volumes"] == [{"name": "output", "hostPath": {"path": "/home/work/paddle_output"}}]
    assert container["volumeMounts"] == [
        {"name": "output", "mountPath": "/root/paddle/demo/quick_start/output"}
    ]


FULL = """\
metadata:
  name: demo
  namespace: ml
  labels: {team: ads}
  annotations: {owner: me}
spec:
  workload: job
  image: img:1
  imagePullPolicy: IfNotPresent
  command: [python3, train.py]
  args: [--epochs, "10"]
  workingDir: /workspace
  env: [{name: EPOCHS, value: "10"}]
  resources: {requests: {cpu: 2, memory: 4Gi}, limits: {memory: 8Gi}}
  gpus: 2
  nodeSelector: {pool: gpu}
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  shm: 2Gi
  run: {restartPolicy: OnFailure, backoffLimit: 0, activeDeadlineSeconds: 86400,
        ttlSecondsAfterFinished: 3600}
  volumes:
    - {name: scratch, mountPath: /scratch, emptyDir: {medium: Memory, sizeLimit: 1Gi}}
    - {name: old, mountPath: /old, readOnly: true, claim: {name: existing}}
    - {name: data, mountPath: /data, dynamic: {storageClassName: fast}, capacity: 10Gi,
       accessModes: [ReadWriteOnce]}
"""


def test_every_job_field_reaches_the_manifest(tmp_path):
    files = render(tmp_path, FULL)
    kustomization = files["kustomization.yaml"]
    assert kustomization["namespace"] == "ml"
    assert "commonLabels" not in kustomization
    assert kustomization["labels"][0]["pairs"]["app.kubernetes.io/managed-by"] == "paddlegen"
    assert kustomization["resources"] == [
        "v1_persistentvolumeclaim_demo-data.yaml",
        "batch_v1_job_demo.yaml",
        "v1_configmap_demo-run.yaml",
    ]
    job = files["batch_v1_job_demo.yaml"]
    assert job["metadata"]["namespace"] == "ml"
    assert job["metadata"]["annotations"] == {
        "owner": "me",
        "argocd.argoproj.io/sync-wave": "3",
        "argocd.argoproj.io/hook": "Sync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
    }
    for labels in (job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]):
        assert labels["team"] == "ads"
        assert {
            "app.kubernetes.io/name",
            "app.kubernetes.io/instance",
            "app.kubernetes.io/component",
            "app.kubernetes.io/part-of",
            "app.kubernetes.io/managed-by",
        } <= set(labels)
    spec = job["spec"]
    assert (
        spec["backoffLimit"],
        spec["activeDeadlineSeconds"],
        spec["ttlSecondsAfterFinished"],
    ) == (0, 86400, 3600)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "OnFailure"
    assert pod["nodeSelector"] == {"pool": "gpu"}
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    container = pod["containers"][0]
    assert container["name"] == "paddle"
    assert container["args"] == ["--epochs", "10"] and container["workingDir"] == "/workspace"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["env"] == [{"name": "EPOCHS", "value": "10"}]
    assert container["resources"] == {
        "requests": {"cpu": "2", "memory": "4Gi"},
        "limits": {"memory": "8Gi", "nvidia.com/gpu": "2"},
    }
    assert {m["mountPath"]: m["name"] for m in container["volumeMounts"]} == {
        "/scratch": "scratch",
        "/old": "old",
        "/data": "data",
        "/dev/shm": "dshm",
    }
    assert {"name": "old", "mountPath": "/old", "readOnly": True} in container["volumeMounts"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "2Gi"}
    assert volumes["old"]["persistentVolumeClaim"] == {"claimName": "existing", "readOnly": True}
    assert volumes["data"]["persistentVolumeClaim"] == {"claimName": "demo-data"}
    pvc = files["v1_persistentvolumeclaim_demo-data.yaml"]
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "fast",
    }


def test_a_value_cannot_inject_yaml(tmp_path):
    files = render(tmp_path, FULL.replace('value: "10"', 'value: "x\\nkind: Secret\\n"'))
    job = files["batch_v1_job_demo.yaml"]
    assert job["kind"] == "Job"
    assert (
        job["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "x\nkind: Secret\n"
    )


def test_output_is_byte_stable(tmp_path):
    assert render_file(tmp_path, HEADER + FULL).plan == render_file(tmp_path, HEADER + FULL).plan


VOLCANO = {"scheduler": "volcano", "queue": "research", "priorityClassName": "high"}


@pytest.mark.parametrize(
    ("workload", "ranks"), [("job", 1), ("distributed-job", 2), ("collective-job", 2)]
)
def test_under_volcano_a_batch_job_is_a_gang_its_pods_join_and_the_data_job_stays_out(
    workload, ranks
):
    """No PodGroup of paddlegen's: Volcano's podgroup controller makes one for the Job's pods,
    owned by the Job (deleted with it), sized by the Job's annotation, queued and prioritised
    by the pods'."""
    objects = rendered_objects(kueue_spec(workload, scheduling=VOLCANO))
    assert "PodGroup" not in {kind for kind, _ in objects}
    job = objects[("Job", "demo")]
    assert job["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == str(ranks)
    pod = job["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "research"}
    assert (pod["spec"]["schedulerName"], pod["spec"]["priorityClassName"]) == ("volcano", "high")
    data = objects[("Job", "demo-data")]
    assert "scheduling.volcano.sh/group-min-member" not in data["metadata"].get("annotations", {})
    assert "annotations" not in data["spec"]["template"]["metadata"]
    assert not {"schedulerName", "priorityClassName"} & set(data["spec"]["template"]["spec"])


def test_deleting_the_application_keeps_the_data_volume_and_its_claim():
    """Delete=false on both: a PV deleted under its kept, bound claim would hang on its
    pv-protection finalizer, and the Application's deletion with it (verified live in
    tests/cluster/test_argocd_envs.py)."""
    nfs = {"nfs": {"server": "10.0.0.1", "path": "/x"}, "capacity": "1Gi"}
    objects = rendered_objects(spec("job", volumes=[{"name": "data", "mountPath": "/d", **nfs}]))
    options = {
        kind: obj["metadata"]["annotations"].get("argocd.argoproj.io/sync-options")
        for (kind, _), obj in objects.items()
    }
    assert options == {
        "PersistentVolume": "Delete=false",
        "PersistentVolumeClaim": "Delete=false",
        "Job": None,
        "ConfigMap": None,
    }
