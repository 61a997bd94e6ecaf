"""Facts about the `kubeflow-paddlejob` workload (kubeflow.org/v1) that snapshots must not hide."""

from __future__ import annotations

from typing import Any

from paddlegen.validate.inprocess import validate_in_process
from tests.builders import HEADER, objects_by_kind, render_file, rendered_objects

MASTER_PORT = [{"name": "master", "containerPort": 6768}]


def objects(body: str) -> dict[str, dict[str, Any]]:
    return {kind: obj for (kind, _), obj in rendered_objects(HEADER + body).items()}


def paddlejob(body: str) -> dict[str, Any]:
    return objects(body)["PaddleJob"]


PS_MODE = """\
metadata: {name: wide-and-deep}
spec:
  workload: kubeflow-paddlejob
  image: registry.example.com/demo:v1
  command: [python3, -m, paddle.distributed.launch, train.py]
  ps: {replicas: 2}
  worker: {replicas: 3, gpus: 1}
  kubeflow: {cleanPodPolicy: None}
"""


def test_a_collective_jobs_worker_is_never_restarted_alone():
    """Restarted in place, a collective worker would come back with rank -1 and never finish
    the rendezvous the others did; with Never one failed worker fails the PaddleJob."""
    collective = PS_MODE.replace("  ps: {replicas: 2}\n", "")
    replicas = paddlejob(collective)["spec"]["paddleReplicaSpecs"]
    assert {name: r["restartPolicy"] for name, r in replicas.items()} == {"Worker": "Never"}
    asked = paddlejob(collective + "  run: {restartPolicy: OnFailure}\n")
    assert asked["spec"]["paddleReplicaSpecs"]["Worker"]["restartPolicy"] == "OnFailure"


def test_ps_becomes_master_and_worker_stays_worker(tmp_path):
    plan = render_file(tmp_path, HEADER + PS_MODE).plan
    assert list(plan) == [
        "kustomization.yaml",
        "kubeflow.org_v1_paddlejob_wide-and-deep.yaml",
        "v1_configmap_wide-and-deep-run.yaml",
    ]
    job = objects_by_kind(plan)["PaddleJob"]
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "PaddleJob")
    replicas = job["spec"]["paddleReplicaSpecs"]
    assert list(replicas) == ["Master", "Worker"]
    assert replicas["Master"]["replicas"] == 2 and replicas["Worker"]["replicas"] == 3
    for replica in replicas.values():
        assert set(replica) == {"replicas", "restartPolicy", "template"}
        # A PS job's: the operator's default, its trainers reach the servers anew.
        assert replica["restartPolicy"] == "OnFailure"
        spec = replica["template"]["spec"]
        assert "restartPolicy" not in spec  # the operator copies the replica's onto the pods
        (container,) = spec["containers"]
        assert container["name"] == "paddle"
        assert container["ports"] == MASTER_PORT
        assert container["command"] == ["python3", "-m", "paddle.distributed.launch", "train.py"]
        assert "env" not in container  # PADDLE_MASTER, PADDLE_NNODES, ... are the operator's
    worker = replicas["Worker"]["template"]["spec"]["containers"][0]
    assert worker["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "None", "backoffLimit": 6}


def test_collective_has_only_workers_and_a_bounded_run_policy():
    """training-operator v1.9.0 bounds restarts only when runPolicy.backoffLimit is set: a
    crashing trainer would restart for ever; paddlegen bounds it as a Job's default does."""
    job = paddlejob(
        """\
metadata: {name: collective}
spec:
  workload: kubeflow-paddlejob
  image: img:1
  worker: {replicas: 4}
  kubeflow: {port: 40000}
""",
    )
    assert job["spec"]["runPolicy"] == {"backoffLimit": 6}
    (worker,) = job["spec"]["paddleReplicaSpecs"].values()
    assert list(job["spec"]["paddleReplicaSpecs"]) == ["Worker"]
    assert worker["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "master", "containerPort": 40000}
    ]


def test_run_settings_go_to_run_policy_and_replicas():
    job = paddlejob(
        PS_MODE
        + """\
  run: {restartPolicy: Never, backoffLimit: 2, activeDeadlineSeconds: 86400,
        ttlSecondsAfterFinished: 3600}
""",
    )
    assert job["spec"]["runPolicy"] == {
        "cleanPodPolicy": "None",
        "backoffLimit": 2,
        "activeDeadlineSeconds": 86400,
        "ttlSecondsAfterFinished": 3600,
    }
    replicas = job["spec"]["paddleReplicaSpecs"].values()
    assert [r["restartPolicy"] for r in replicas] == ["Never", "Never"]


def test_volcano_sets_the_run_policy_scheduling_policy():
    found = objects(
        """\
metadata: {name: gang, namespace: ml}
spec:
  workload: kubeflow-paddlejob
  image: img:1
  ps: {replicas: 1}
  worker: {replicas: 2}
  scheduling: {scheduler: volcano, queue: training, priorityClassName: high, minAvailable: 3}
"""
    )
    policy = found["PaddleJob"]["spec"]["runPolicy"]["schedulingPolicy"]
    assert policy == {
        "minAvailable": 3,
        "queue": "training",
        "priorityClass": "high",
        "minResources": {"cpu": "1500m", "memory": "3Gi"},
    }
    assert "PodGroup" not in found  # training-operator builds it from the policy


def test_min_resources_count_the_first_min_available_pods_master_first():
    job = paddlejob(
        """\
metadata: {name: gang}
spec:
  workload: kubeflow-paddlejob
  image: img:1
  ps: {replicas: 2, resources: {requests: {cpu: "1", memory: 1Gi}}}
  worker: {replicas: 3, resources: {requests: {cpu: "4", memory: 8Gi}, limits: {nvidia.com/gpu: 1}}}
  scheduling: {scheduler: volcano, minAvailable: 3}
""",
    )
    policy = job["spec"]["runPolicy"]["schedulingPolicy"]
    # 2 Master pods and the first Worker: what Volcano must reserve before starting any pod
    assert policy["minResources"] == {"cpu": "6", "memory": "10Gi", "nvidia.com/gpu": "1"}


def test_shm_node_selection_and_volumes_reach_every_replica():
    job = paddlejob(
        """\
metadata: {name: mounts}
spec:
  workload: kubeflow-paddlejob
  image: img:1
  shm: 1Gi
  nodeSelector: {pool: gpu}
  ps: {replicas: 1}
  worker: {replicas: 2}
  volumes: [{name: data, mountPath: /data, hostPath: {path: /mnt/data}}]
""",
    )
    for replica in job["spec"]["paddleReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        assert spec["nodeSelector"] == {"pool": "gpu"}
        assert spec["containers"][0]["volumeMounts"] == [
            {"name": "data", "mountPath": "/data"},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ]
        assert spec["volumes"] == [
            {"name": "data", "hostPath": {"path": "/mnt/data"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        ]


def test_renders_are_valid_against_the_strict_crd_schema(tmp_path):
    plan = render_file(
        tmp_path,
        HEADER
        + PS_MODE
        + """\
  shm: 1Gi
  resources: {requests: {cpu: "1", memory: 2Gi}}
  scheduling: {scheduler: volcano, priorityClassName: high}
  run: {restartPolicy: OnFailure, backoffLimit: 0, ttlSecondsAfterFinished: 60}
""",
    ).plan
    manifests = sorted((path, text) for path, text in plan.items() if path != "kustomization.yaml")
    assert [path for path, _ in manifests] == [
        "kubeflow.org_v1_paddlejob_wide-and-deep.yaml",
        "v1_configmap_wide-and-deep-run.yaml",
    ]
    assert validate_in_process(manifests) == []
