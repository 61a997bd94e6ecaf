"""Facts about the `distributed-job` workload (seeds 001, 004) that a snapshot cannot pin alone."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.pipeline import write
from tests.builders import HEADER, rendered, rendered_objects
from tests.conftest import require_tool

SEED_004 = """\
metadata:
  name: paddle-cluster-job
spec:
  workload: distributed-job
  image: paddlepaddle/paddle-tutorial:k8s_train
  worker: {replicas: 3}
  run: {activeDeadlineSeconds: 7200}
  volumes:
    - name: efs
      mountPath: /home/jobpath
      efs: {fileSystemId: fs-2cbf7385, region: us-west-2, nfs: true}
      capacity: 100Gi
  distributed:
    volume: efs
    trainConfigDir: quick_start
    port: 7164
    portsNum: 2
    portsNumSparse: 2
    trainerCount: 3
"""


NAMESPACED = SEED_004.replace(
    "  name: paddle-cluster-job\n", "  name: paddle-cluster-job\n  namespace: team-a\n"
)


def render(body: str = SEED_004) -> dict[tuple[str, str], dict[str, Any]]:
    return rendered_objects(HEADER + body)


def pod_of(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = objects[("Job", "paddle-cluster-job")]["spec"]["template"]["spec"]
    return pod


def env_of(container: dict[str, Any]) -> dict[str, object]:
    """name -> value, or the valueFrom mapping."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_one_job_runs_every_trainer_to_completion():
    job = render()[("Job", "paddle-cluster-job")]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["spec"]["parallelism"] == 3 and job["spec"]["completions"] == 3
    assert job["spec"]["activeDeadlineSeconds"] == 7200
    # A replacement pod would wait forever for the failed one: the first failure ends the Job.
    assert job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["name"] == "paddle"
    assert container["image"] == "paddlepaddle/paddle-tutorial:k8s_train"
    assert container["command"] == ["bin/bash", "-c", "/root/start.sh"]


def test_env_is_the_legacy_image_contract():
    (container,) = pod_of(render())["containers"]
    assert env_of(container) == {
        "JOB_NAME": "paddle-cluster-job",
        "JOB_PATH": "/home/jobpath",
        "JOB_NAMESPACE": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        "TRAIN_CONFIG_DIR": "quick_start",
        "CONF_PADDLE_NIC": "eth0",
        "CONF_PADDLE_PORT": "7164",
        "CONF_PADDLE_PORTS_NUM": "2",
        "CONF_PADDLE_PORTS_NUM_SPARSE": "2",
        "CONF_PADDLE_GRADIENT_NUM": "3",
        "TRAINER_COUNT": "3",
    }
    assert [e["name"] for e in container["env"]][:2] == ["JOB_NAME", "JOB_PATH"]  # seed order


def test_with_a_namespace_the_pods_still_read_theirs_and_the_binding_names_it():
    objects = render(NAMESPACED)
    (container,) = pod_of(objects)["containers"]
    assert env_of(container)["JOB_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert objects[("RoleBinding", "paddle-cluster-job")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "paddle-cluster-job", "namespace": "team-a"}
    ]


def test_ports_span_dense_and_sparse_with_equal_host_ports():
    (container,) = pod_of(render())["containers"]
    assert container["ports"] == [
        {"name": f"jobport{i}", "containerPort": 7164 + i, "protocol": "TCP", "hostPort": 7164 + i}
        for i in range(4)
    ]


def test_defaults_one_port_and_trainer_count_one():
    body = SEED_004.replace(
        "    port: 7164\n    portsNum: 2\n    portsNumSparse: 2\n    trainerCount: 3\n", ""
    )
    (container,) = pod_of(render(body))["containers"]
    assert container["ports"] == [
        {"name": "jobport0", "containerPort": 7164, "protocol": "TCP", "hostPort": 7164}
    ]
    env = env_of(container)
    assert (env["CONF_PADDLE_PORTS_NUM"], env["CONF_PADDLE_PORTS_NUM_SPARSE"]) == ("1", "0")
    assert env["TRAINER_COUNT"] == "1"  # always set: start.sh runs under `set -u`


def test_without_host_ports_no_host_port_and_no_anti_affinity():
    pod = pod_of(render(SEED_004 + "    hostPorts: false\n"))
    assert [p.get("hostPort") for p in pod["containers"][0]["ports"]] == [None] * 4
    assert "affinity" not in pod


def test_anti_affinity_keeps_trainers_on_separate_nodes():
    term = {
        "labelSelector": {"matchLabels": {"job-name": "paddle-cluster-job"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    assert pod_of(render())["affinity"] == {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }


def test_anti_affinity_is_merged_into_the_spec_affinity():
    own_term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    node = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["train"]}]}
            ]
        }
    }
    affinity = {
        "nodeAffinity": node,
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [own_term]},
    }
    flow = yaml.safe_dump(affinity, default_flow_style=True).strip()
    body = SEED_004.replace(
        "  worker: {replicas: 3}\n", f"  worker: {{replicas: 3, affinity: {flow}}}\n"
    )
    pod = pod_of(render(body))
    assert pod["affinity"]["nodeAffinity"] == node
    terms = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0] == own_term
    assert terms[1]["labelSelector"] == {"matchLabels": {"job-name": "paddle-cluster-job"}}


def test_rbac_lets_the_pods_list_their_peers():
    objects = render()
    sa = objects[("ServiceAccount", "paddle-cluster-job")]
    role = objects[("Role", "paddle-cluster-job")]
    binding = objects[("RoleBinding", "paddle-cluster-job")]
    assert sa["apiVersion"] == "v1"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    # No namespace: the subject means the RoleBinding's own namespace (kustomize fills it in).
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"]}]
    assert pod_of(objects)["serviceAccountName"] == sa["metadata"]["name"]
    kinds = [kind for kind, _ in objects]
    assert kinds.index("RoleBinding") < kinds.index("Job")
    assert kinds.index("ServiceAccount") < kinds.index("Job")


def test_efs_volume_is_mounted_through_its_claim():
    objects = render()
    (claim,) = [name for kind, name in objects if kind == "PersistentVolumeClaim"]
    pod = pod_of(objects)
    assert pod["volumes"] == [{"name": "efs", "persistentVolumeClaim": {"claimName": claim}}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "efs", "mountPath": "/home/jobpath"}]


@pytest.mark.parametrize(
    ("where", "command"),
    [
        ("    trainerCount: 3\n", ["/bin/sh", "-c", "/opt/start.sh"]),
        ("  worker: {replicas: 3}\n", ["/root/other.sh"]),
    ],
    ids=["distributed", "spec"],
)
def test_a_command_replaces_the_default_start_command(where, command):
    indent = where[: len(where) - len(where.lstrip())]
    body = SEED_004.replace(where, f"{where}{indent}command: {command}\n")
    assert pod_of(render(body))["containers"][0]["command"] == command


def test_user_env_follows_the_contract():
    body = SEED_004.replace(
        "  worker: {replicas: 3}\n",
        "  worker: {replicas: 3}\n  env: [{name: EPOCHS, value: '10'}]\n",
    )
    env = pod_of(render(body))["containers"][0]["env"]
    assert env[-1] == {"name": "EPOCHS", "value": "10"}
    assert env[-2]["name"] == "TRAINER_COUNT"


def test_restart_policy_on_failure_keeps_the_kubernetes_backoff():
    body = SEED_004.replace(
        "run: {activeDeadlineSeconds: 7200}",
        "run: {activeDeadlineSeconds: 7200, restartPolicy: OnFailure}",
    )
    job = render(body)[("Job", "paddle-cluster-job")]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert "backoffLimit" not in job["spec"]


@pytest.fixture(scope="module")
def schema_dir(tmp_path_factory) -> Path:
    from paddlegen.validate import k8s_schemas as k8sschemas

    return k8sschemas.export(tmp_path_factory.mktemp("schemas"))


def test_kustomize_builds_it_and_kubeconform_accepts_it(tmp_path, schema_dir):
    kustomize = require_tool("kustomize")
    kubeconform = require_tool("kubeconform")
    body = SEED_004 + "  dataPrep: {image: paddlepaddle/paddle-tutorial:k8s_data, volume: efs}\n"
    out = tmp_path / "out"
    write.write_rendered([rendered(HEADER + body)], out)
    built = subprocess.run(
        [kustomize, "build", str(out / "paddle-cluster-job")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert built.stderr == ""
    kinds = [d["kind"] for d in yaml.safe_load_all(built.stdout)]
    assert sorted(kinds) == sorted(
        [
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Job",
            "Job",
            "ConfigMap",
        ]
    )
    location = str(schema_dir / "{{.ResourceKind}}{{.KindSuffix}}.json")
    checked = subprocess.run(
        [kubeconform, "-strict", "-summary", "-schema-location", location, "-"],
        input=built.stdout,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Valid: 8, Invalid: 0, Errors: 0, Skipped: 0" in checked.stdout
