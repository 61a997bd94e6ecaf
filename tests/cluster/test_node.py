"""Real training on a real node (`hack/local-cluster --with node`): a `job` spec rendered by
paddlegen, with the Paddle image `build` made, runs a small linear regression in Paddle
(tests/cluster/training/collective.py, one rank) to completion under the real kubelet,
containerd and runc, beside a native sidecar that runs for ever and after an init container."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    overrun,
    trained_in,
    wait_until_done,
)
from tests.cluster.training import (
    PREPARED,
    assert_trained,
    program,
    with_init_container_and_sidecar,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.node

NAMESPACE = "node-training"


def spec(image: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "workload": "job",
        "image": image,
        "imagePullPolicy": "Never",  # imported by `up`, no registry has it
        "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "2Gi"}},
        "command": ["python3", "-c", program("collective")],  # one rank: world size 1
        "run": {"restartPolicy": "Never", "backoffLimit": 0},
    }
    with_init_container_and_sidecar(body, image)
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "linear-regression", "namespace": NAMESPACE},
        "spec": body,
    }


def render_stdout(data: dict[str, object], folder: Path) -> str:
    """What `paddlegen render --stdout` (the CLI, a process of its own) makes of ``data``."""
    spec_file = folder / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(data))
    return subprocess.run(
        [sys.executable, "-m", "paddlegen", "render", str(spec_file), "--stdout"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def job_condition(kube: Kube, name: str) -> str:
    done = kube.run("get", "job", "-n", NAMESPACE, name, "-o", "json")
    conditions = json.loads(done.stdout).get("status", {}).get("conditions", [])
    return next((c["type"] for c in conditions if c["status"] == "True"
                 and c["type"] in ("Complete", "Failed")), "")  # fmt: skip


def test_a_rendered_job_trains_and_its_loss_falls(node: Kube, tmp_path: Path) -> None:
    """And beside a sidecar that never exits, after an init container that ran once the
    sidecar was up (training/__init__.py with_init_container_and_sidecar): the Job completes,
    and the kubelet stopped the sidecar."""
    image = local_cluster().images.PADDLE.reference
    node.run("create", "namespace", NAMESPACE)
    node.apply(render_stdout(spec(image), tmp_path))
    condition, took, logs = wait_until_done(
        node, NAMESPACE, lambda: job_condition(node, "linear-regression")
    )
    assert condition == "Complete", overrun(node, NAMESPACE, condition, took, logs)
    (log,) = logs.values()
    assert log.startswith(PREPARED + "\n"), log
    assert_trained(logs, 1)
    (pod,) = json.loads(node.run("get", "pods", "-n", NAMESPACE, "-o", "json").stdout)["items"]
    assert pod["status"]["phase"] == "Succeeded"
    states = {s["name"]: s["state"] for s in pod["status"]["initContainerStatuses"]}
    assert states["prepare"]["terminated"]["exitCode"] == 0
    assert states["heartbeat"]["terminated"]["exitCode"] == 0  # stopped, by SIGTERM
    trained_in(took)


def test_env_exports_the_references_of_both_paddle_images(node: Kube) -> None:
    """What a spec names to run on the node (with imagePullPolicy Never): Paddle 3.x, and
    Paddle 2.6 for parameter servers; and the plugin sidecar's image."""
    images = local_cluster().images
    done = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "local-cluster"), "env"],
        env={**os.environ, "PADDLEGEN_CLUSTER_DIR": str(node.state)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert f"export PADDLEGEN_PADDLE_IMAGE={images.PADDLE.reference}\n" in done.stdout
    assert f"export PADDLEGEN_PADDLE_PS_IMAGE={images.PADDLE_PS.reference}\n" in done.stdout
    assert f"export PADDLEGEN_CMP_IMAGE={images.PLUGIN.reference}\n" in done.stdout


def test_a_distributed_job_gives_its_contract_ports_and_peers(node: Kube, tmp_path: Path) -> None:
    """`distributed-job` as far as a current image allows: its image (Paddle v0.10) cannot be
    rebuilt, so a stand-in of its entry point (tests/cluster/training/distributed_stand_in.py)
    reads the env contract, finds its peers through the API server with the Job's
    ServiceAccount, as the image's start_paddle.py does, and answers on the pserver ports,
    which the test reaches through the node's hostPorts. One trainer: hostPorts and the
    anti-affinity take a node per pod, and there is one node."""
    namespace, name = "node-distributed", "cluster-job"
    data = {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "workload": "distributed-job",
            "image": local_cluster().images.PADDLE.reference,
            "imagePullPolicy": "Never",
            "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}},
            "command": ["python3", "-c", program("distributed_stand_in")],
            "worker": {"replicas": 1},
            "volumes": [{"name": "jobpath", "mountPath": "/home/jobpath",
                         "hostPath": {"path": str(tmp_path), "type": "Directory"}}],
            "distributed": {"volume": "jobpath", "trainConfigDir": "quick_start", "nic": "eth0",
                            "port": 7164, "portsNum": 2, "portsNumSparse": 2, "trainerCount": 1,
                            "hostPorts": True},
        },
    }  # fmt: skip
    node.run("create", "namespace", namespace)
    node.apply(render_stdout(data, tmp_path))

    def log() -> str:
        return node.run("logs", "-n", namespace, f"job/{name}", check=False).stdout

    started = time.monotonic()
    while "listening on 7164-7167" not in log() and time.monotonic() - started < HANG_TIMEOUT:
        time.sleep(0.5)
    node_ip = local_cluster().node.NODE_IP
    answers = []
    for port in range(7164, 7168):  # the hostPorts, on the node's address
        with socket.create_connection((node_ip, port), timeout=10) as connection:
            answers.append(connection.makefile().readline().strip())
    assert answers == ["trainer 0"] * 4, log()
    node.run(
        "wait",
        "-n",
        namespace,
        "--for=condition=Complete",
        f"job/{name}",
        f"--timeout={HANG_TIMEOUT:.0f}s",
    )
    output = log()
    contract = json.loads(re.search(r"^contract (.*)$", output, re.M).group(1))
    assert contract == {
        "JOB_NAME": name, "JOB_PATH": "/home/jobpath", "JOB_NAMESPACE": namespace,
        "TRAIN_CONFIG_DIR": "quick_start", "CONF_PADDLE_NIC": "eth0", "CONF_PADDLE_PORT": "7164",
        "CONF_PADDLE_PORTS_NUM": "2", "CONF_PADDLE_PORTS_NUM_SPARSE": "2",
        "CONF_PADDLE_GRADIENT_NUM": "1", "TRAINER_COUNT": "1",
    }  # fmt: skip
    pod_ip = json.loads(node.run("get", "pods", "-n", namespace, "-o", "json").stdout)["items"][0][
        "status"
    ]["podIP"]
    assert f"peers {pod_ip} trainer 0" in output, output
