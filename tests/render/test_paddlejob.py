"""Facts about the `paddlejob` workload (PaddleFlow, seed 003) that snapshots must not hide."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.validate.inprocess import validate_in_process
from tests.builders import HEADER, objects_by_kind, render_file, rendered_objects

OPERATOR_ENV = {
    "POD_IP",
    "PADDLE_TRAINER_ID",
    "TRAINING_ROLE",
    "PADDLE_TRAINING_ROLE",
    "PADDLE_TRAINER_ENDPOINTS",
    "PADDLE_PSERVERS_IP_PORT_LIST",
    "PADDLE_TRAINERS_NUM",
    "PADDLE_PORT",
    "PADDLE_WITH_GLOO",
}


ROLES = ("ps", "worker", "heter")


def objects(body: str) -> dict[str, dict[str, Any]]:
    return {kind: obj for (kind, _), obj in rendered_objects(HEADER + body).items()}


def paddlejob(body: str) -> dict[str, Any]:
    return objects(body)["PaddleJob"]


def pod(job: dict[str, Any], role: str) -> dict[str, Any]:
    return job["spec"][role]["template"]["spec"]


PS_MODE = """\
metadata: {name: wide-and-deep, namespace: paddlecloud}
spec:
  workload: paddlejob
  image: registry.example.com/demo:v1
  ps: {replicas: 2}
  worker: {replicas: 3}
  heter: {replicas: 1, gpus: 1}
  paddlejob: {cleanPodPolicy: OnCompletion, withGloo: 1, intranet: PodIP}
"""


def test_ps_mode_roles_and_settings(tmp_path):
    plan = render_file(tmp_path, HEADER + PS_MODE).plan
    assert list(plan) == [
        "kustomization.yaml",
        "batch.paddlepaddle.org_v1_paddlejob_wide-and-deep.yaml",
        "v1_configmap_wide-and-deep-run.yaml",
    ]
    job = objects_by_kind(plan)["PaddleJob"]
    assert (job["apiVersion"], job["kind"]) == ("batch.paddlepaddle.org/v1", "PaddleJob")
    assert job["metadata"]["name"] == "wide-and-deep"
    spec = job["spec"]
    # The operator's own values, exactly: withGloo (and elastic, below) are integers.
    assert spec["cleanPodPolicy"] == "OnCompletion"
    assert spec["withGloo"] == 1 and "elastic" not in spec
    assert spec["intranet"] == "PodIP"
    assert [(key, spec[key]["replicas"]) for key in spec if key in ROLES] == [
        ("ps", 2),
        ("worker", 3),
        ("heter", 1),
    ]
    assert "schedulingPolicy" not in spec
    for role in ROLES:
        assert set(spec[role]) == {"replicas", "template"}  # requests/limits are elastic bounds
        assert pod(job, role)["containers"][0]["name"] == "paddle"
    assert pod(job, "heter")["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert pod(job, "ps")["containers"][0]["resources"] == {  # the defaults only
        "requests": {"cpu": "500m", "memory": "1Gi"}
    }


def test_the_operator_owns_env_ports_and_restart_policy():
    job = paddlejob(PS_MODE.replace("  ps:", '  env: [{name: EPOCHS, value: "10"}]\n  ps:'))
    gloo = {"name": "PADDLE_GLOO_HTTP_ENDPOINT", "value": "wide-and-deep-ps-0:35999"}
    for role in ROLES:
        spec = pod(job, role)
        (container,) = spec["containers"]
        # The one operator key paddlegen sets: the operator's own is the server's port
        # (workloads/paddlejob gloo_env).
        assert container["env"] == [gloo, {"name": "EPOCHS", "value": "10"}]
        assert "ports" not in container and "envFrom" not in container
        assert not {e["name"] for e in container["env"]} & OPERATOR_ENV
        # Unset, the operator picks per role (OnFailure for Service-mode workers and elastic).
        assert "restartPolicy" not in spec
        assert "hostNetwork" not in spec


@pytest.mark.parametrize(
    "settings", ["{withGloo: 0}", "{}", "{withGloo: 1, intranet: Service}"], ids=str
)
def test_the_gloo_endpoint_is_set_only_where_the_operator_starts_gloo(settings):
    body = PS_MODE.replace("{cleanPodPolicy: OnCompletion, withGloo: 1, intranet: PodIP}", settings)
    env = [e["name"] for e in pod(paddlejob(body), "worker")["containers"][0].get("env", [])]
    assert ("PADDLE_GLOO_HTTP_ENDPOINT" in env) == ("withGloo: 1" in settings)


def test_an_explicit_restart_policy_reaches_every_role():
    job = paddlejob(PS_MODE + "  run: {restartPolicy: Never}\n")
    assert [pod(job, role)["restartPolicy"] for role in ROLES] == ["Never"] * 3


def test_collective_gpus_shm_node_selection_and_volumes():
    job = paddlejob(
        """\
metadata: {name: resnet}
spec:
  workload: paddlejob
  image: registry.example.com/resnet:v1
  command: [python]
  args: ["-m", "paddle.distributed.launch", "train_fleet.py"]
  gpus: 1
  shm: 2Gi
  nodeSelector: {accelerator: nvidia-tesla-p100}
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  worker: {replicas: 2}
  volumes:
    - {name: data, mountPath: /data, claim: {name: shared}}
  paddlejob: {intranet: PodIP}
""",
    )
    assert set(job["spec"]) == {"intranet", "worker"}  # no ps: the operator runs Collective
    assert job["spec"]["intranet"] == "PodIP"  # Service would hang: paddlejob-intranet
    assert job["spec"]["worker"]["replicas"] == 2
    spec = pod(job, "worker")
    (container,) = spec["containers"]
    assert container["name"] == "paddle"
    assert container["command"] == ["python"]
    assert container["args"] == ["-m", "paddle.distributed.launch", "train_fleet.py"]
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert spec["nodeSelector"] == {"accelerator": "nvidia-tesla-p100"}
    assert spec["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}} in spec["volumes"]
    assert {"name": "data", "mountPath": "/data"} in container["volumeMounts"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "shared"}} in spec["volumes"]


def test_role_overrides_stay_in_their_role():
    job = paddlejob(
        """\
metadata: {name: mixed}
spec:
  workload: paddlejob
  image: cpu:1
  resources: {requests: {cpu: "2"}}
  ps: {replicas: 1, nodeSelector: {pool: cpu}}
  worker: {replicas: 2, image: gpu:1, gpus: 2, nodeSelector: {pool: gpu}}
""",
    )
    ps, worker = pod(job, "ps"), pod(job, "worker")
    assert ps["containers"][0]["image"] == "cpu:1"
    assert worker["containers"][0]["image"] == "gpu:1"
    assert ps["nodeSelector"] == {"pool": "cpu"} and worker["nodeSelector"] == {"pool": "gpu"}
    assert ps["containers"][0]["resources"] == {"requests": {"cpu": "2", "memory": "1Gi"}}
    assert worker["containers"][0]["resources"] == {
        "requests": {"cpu": "2", "memory": "1Gi"},
        "limits": {"nvidia.com/gpu": "2"},
    }


def test_volcano_sets_the_scheduling_policy():
    found = objects(
        """\
metadata: {name: gang, namespace: paddlecloud}
spec:
  workload: paddlejob
  image: img:1
  ps: {replicas: 2}
  worker: {replicas: 2}
  scheduling: {scheduler: volcano, queue: training, priorityClassName: high}
"""
    )
    policy = found["PaddleJob"]["spec"]["schedulingPolicy"]
    # The CRD spells it priorityClass (not priorityClassName as pods and PodGroups do).
    assert policy == {
        "minAvailable": 4,
        "queue": "training",
        "priorityClass": "high",
        "minResources": {"cpu": "2", "memory": "4Gi"},
    }
    assert "PodGroup" not in found  # the operator builds it from the policy, and owns it


def test_volcano_min_available_is_the_users():
    job = paddlejob(
        """\
metadata: {name: gang}
spec:
  workload: paddlejob
  image: img:1
  worker: {replicas: 4}
  scheduling: {scheduler: volcano, minAvailable: 3}
""",
    )
    policy = job["spec"]["schedulingPolicy"]
    assert {k: policy[k] for k in ("minAvailable", "queue")} == {
        "minAvailable": 3,
        "queue": "default",
    }


def test_renders_are_valid_against_the_strict_crd_schema(tmp_path):
    plan = render_file(
        tmp_path,
        HEADER
        + PS_MODE.replace(
            "  paddlejob:",
            """\
  shm: 1Gi
  resources: {requests: {cpu: "1", memory: 2Gi}}
  scheduling: {scheduler: volcano, priorityClassName: high}
  run: {restartPolicy: OnFailure}
  volumes: [{name: data, mountPath: /data, nfs: {server: 10.0.0.1, path: /}, capacity: 1Gi}]
  paddlejob:""",
        ),
    ).plan
    manifests = sorted((path, text) for path, text in plan.items() if path != "kustomization.yaml")
    assert [path for path, _ in manifests] == [
        "batch.paddlepaddle.org_v1_paddlejob_wide-and-deep.yaml",
        "v1_configmap_wide-and-deep-run.yaml",
        "v1_persistentvolume_paddlecloud-wide-and-deep-data.yaml",
        "v1_persistentvolumeclaim_wide-and-deep-data.yaml",
    ]
    assert validate_in_process(manifests) == []


def test_host_network_pods_resolve_cluster_names_and_take_a_node_each():
    # The operator sets hostNetwork for intranet Host; without ClusterFirstWithHostNet its
    # init container cannot resolve the job's Services, and equal ports need a node each.
    job = paddlejob(
        """\
metadata: {name: host-net}
spec:
  workload: paddlejob
  image: img:1
  ps: {replicas: 1}
  worker:
    replicas: 2
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [a]}]}]
  paddlejob: {intranet: Host}
""",
    )
    apart = {
        "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "host-net"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    for role in ("ps", "worker"):
        spec = pod(job, role)
        assert spec["dnsPolicy"] == "ClusterFirstWithHostNet"
        assert spec["affinity"]["podAntiAffinity"] == {
            "requiredDuringSchedulingIgnoredDuringExecution": [apart]
        }
        assert "hostNetwork" not in spec  # the operator's to set
    assert "nodeAffinity" in pod(job, "worker")["affinity"]  # the role's own terms stay
    assert "nodeAffinity" not in pod(job, "ps")["affinity"]
    podip = paddlejob(PS_MODE)
    assert "dnsPolicy" not in pod(podip, "worker")


def test_elastic_is_copied_as_the_operators_integer():
    job = paddlejob(
        "metadata: {name: el}\nspec: {workload: paddlejob, image: img:1, worker: {replicas: 2},"
        " paddlejob: {elastic: 1}}\n",
    )
    assert job["spec"]["elastic"] == 1
