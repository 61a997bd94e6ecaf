"""Facts about the `distributed-job` workload (seeds 001, 004) that a snapshot cannot pin alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from paddlegen.pipeline import build, write
from tests.builders import HEADER, render_file
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


def render(tmp_path: Path, body: str) -> build.Rendered:
    return render_file(tmp_path, HEADER + body)


def objects(rendered: build.Rendered) -> dict[tuple[str, str], dict]:
    return {(m.kind, m.name): m.obj for m in rendered.manifests}


def pod_of(rendered: build.Rendered, name: str = "paddle-cluster-job") -> dict:
    return objects(rendered)[("Job", name)]["spec"]["template"]["spec"]


def env_of(container: dict) -> dict[str, object]:
    """name -> value, or the valueFrom mapping."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_one_job_runs_every_trainer_to_completion(tmp_path):
    job = objects(render(tmp_path, SEED_004))[("Job", "paddle-cluster-job")]
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


def test_env_is_the_legacy_image_contract(tmp_path):
    (container,) = pod_of(render(tmp_path, SEED_004))["containers"]
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


def test_namespace_comes_from_the_downward_api_even_when_set(tmp_path):
    body = SEED_004.replace(
        "  name: paddle-cluster-job\n", "  name: paddle-cluster-job\n  namespace: team-a\n"
    )
    (container,) = pod_of(render(tmp_path, body))["containers"]
    assert env_of(container)["JOB_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}


def test_ports_span_dense_and_sparse_with_equal_host_ports(tmp_path):
    (container,) = pod_of(render(tmp_path, SEED_004))["containers"]
    assert container["ports"] == [
        {"name": f"jobport{i}", "containerPort": 7164 + i, "protocol": "TCP", "hostPort": 7164 + i}
        for i in range(4)
    ]


def test_defaults_one_port_and_trainer_count_one(tmp_path):
    body = SEED_004.replace(
        "    port: 7164\n    portsNum: 2\n    portsNumSparse: 2\n    trainerCount: 3\n", ""
    )
    (container,) = pod_of(render(tmp_path, body))["containers"]
    assert container["ports"] == [
        {"name": "jobport0", "containerPort": 7164, "protocol": "TCP", "hostPort": 7164}
    ]
    env = env_of(container)
    assert (env["CONF_PADDLE_PORTS_NUM"], env["CONF_PADDLE_PORTS_NUM_SPARSE"]) == ("1", "0")
    assert env["TRAINER_COUNT"] == "1"  # always set: start.sh runs under `set -u`


def test_without_host_ports_no_host_port_and_no_anti_affinity(tmp_path):
    pod = pod_of(render(tmp_path, SEED_004 + "    hostPorts: false\n"))
    assert [p.get("hostPort") for p in pod["containers"][0]["ports"]] == [None] * 4
    assert "affinity" not in pod


def test_anti_affinity_keeps_trainers_on_separate_nodes(tmp_path):
    pod = pod_of(render(tmp_path, SEED_004))
    term = {
        "labelSelector": {"matchLabels": {"job-name": "paddle-cluster-job"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    assert pod["affinity"] == {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }


def test_anti_affinity_is_merged_into_the_spec_affinity(tmp_path):
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
    pod = pod_of(render(tmp_path, body))
    assert pod["affinity"]["nodeAffinity"] == node
    terms = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0] == own_term
    assert terms[1]["labelSelector"] == {"matchLabels": {"job-name": "paddle-cluster-job"}}


def test_rbac_lets_the_pods_list_their_peers(tmp_path):
    rendered = render(tmp_path, SEED_004)
    objs = objects(rendered)
    sa = objs[("ServiceAccount", "paddle-cluster-job")]
    role = objs[("Role", "paddle-cluster-job")]
    binding = objs[("RoleBinding", "paddle-cluster-job")]
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
    assert pod_of(rendered)["serviceAccountName"] == sa["metadata"]["name"]
    kinds = [m.kind for m in rendered.manifests]
    assert kinds.index("RoleBinding") < kinds.index("Job")
    assert kinds.index("ServiceAccount") < kinds.index("Job")


def test_role_binding_names_the_namespace_when_set(tmp_path):
    body = SEED_004.replace(
        "  name: paddle-cluster-job\n", "  name: paddle-cluster-job\n  namespace: team-a\n"
    )
    binding = objects(render(tmp_path, body))[("RoleBinding", "paddle-cluster-job")]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "paddle-cluster-job", "namespace": "team-a"}
    ]


def test_efs_volume_is_mounted_through_its_claim(tmp_path):
    rendered = render(tmp_path, SEED_004)
    claim = next(m.obj for m in rendered.manifests if m.kind == "PersistentVolumeClaim")
    pod = pod_of(rendered)
    assert pod["volumes"] == [
        {"name": "efs", "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
    ]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "efs", "mountPath": "/home/jobpath"}]


def test_distributed_command_replaces_the_default_start_command(tmp_path):
    body = SEED_004 + "    command: [/bin/sh, -c, /opt/start.sh]\n"
    assert pod_of(render(tmp_path, body))["containers"][0]["command"] == [
        "/bin/sh",
        "-c",
        "/opt/start.sh",
    ]


def test_spec_command_replaces_the_default_start_command(tmp_path):
    body = SEED_004.replace(
        "  worker: {replicas: 3}\n", "  worker: {replicas: 3}\n  command: [/root/other.sh]\n"
    )
    assert pod_of(render(tmp_path, body))["containers"][0]["command"] == ["/root/other.sh"]


def test_user_env_follows_the_contract(tmp_path):
    body = SEED_004.replace(
        "  worker: {replicas: 3}\n",
        "  worker: {replicas: 3}\n  env: [{name: EPOCHS, value: '10'}]\n",
    )
    env = pod_of(render(tmp_path, body))["containers"][0]["env"]
    assert env[-1] == {"name": "EPOCHS", "value": "10"}
    assert env[-2]["name"] == "TRAINER_COUNT"


def test_restart_policy_on_failure_keeps_the_kubernetes_backoff(tmp_path):
    body = SEED_004.replace(
        "run: {activeDeadlineSeconds: 7200}",
        "run: {activeDeadlineSeconds: 7200, restartPolicy: OnFailure}",
    )
    job = objects(render(tmp_path, body))[("Job", "paddle-cluster-job")]
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
    rendered = render(tmp_path, body)
    out = tmp_path / "out"
    write.write_rendered([rendered], out)
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


def test_volcano_gangs_every_pod_of_the_job_and_no_data_pod(tmp_path):
    rendered = render(
        tmp_path,
        SEED_004.replace(
            "  run:", "  scheduling: {scheduler: volcano, queue: research}\n  run:"
        ).replace(
            "    trainerCount: 3\n", "    trainerCount: 3\n  dataPrep: {image: d:1, volume: efs}\n"
        ),
    )
    found = objects(rendered)
    assert not [kind for kind, _ in found if kind == "PodGroup"]
    job = found[("Job", "paddle-cluster-job")]
    # Volcano's podgroup controller sizes the Job's group from this annotation
    assert job["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == "3"
    assert job["spec"]["template"]["metadata"]["annotations"] == {
        "scheduling.volcano.sh/queue-name": "research"
    }
    assert pod_of(rendered)["schedulerName"] == "volcano"
    data = found[("Job", "paddle-cluster-job-data")]
    assert "schedulerName" not in data["spec"]["template"]["spec"]
    assert "scheduling.volcano.sh/group-min-member" not in data["metadata"].get("annotations", {})
