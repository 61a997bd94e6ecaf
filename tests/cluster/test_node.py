"""Real training on a real node (`hack/local-cluster --with node`): a `job` spec rendered by
paddlegen, with the Paddle image `build` made, runs a small linear regression in Paddle
(tests/cluster/training/collective.py, one rank) to completion under the real kubelet,
containerd and runc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.training import assert_trained, program
from tests.conftest import ROOT

pytestmark = pytest.mark.node

NAMESPACE = "node-training"
TRAINING_TIMEOUT = 60  # seconds, a job's budget (issue 24)


def spec(image: str) -> dict[str, object]:
    return {
        "apiVersion": "paddlegen/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "linear-regression", "namespace": NAMESPACE},
        "spec": {
            "workload": "job",
            "image": image,
            "imagePullPolicy": "Never",  # imported by `up`, no registry has it
            "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "2Gi"}},
            "command": ["python3", "-c", program("collective")],  # one rank: world size 1
            "run": {"restartPolicy": "Never", "backoffLimit": 0},
        },
    }


def job_condition(kube: Kube, name: str) -> str:
    done = kube.run("get", "job", "-n", NAMESPACE, name, "-o", "json")
    conditions = json.loads(done.stdout).get("status", {}).get("conditions", [])
    return next((c["type"] for c in conditions if c["status"] == "True"
                 and c["type"] in ("Complete", "Failed")), "")  # fmt: skip


def test_a_rendered_job_trains_and_its_loss_falls(node: Kube, tmp_path: Path) -> None:
    image = local_cluster().images.PADDLE.reference
    spec_file = tmp_path / "linear-regression.yaml"
    spec_file.write_text(yaml.safe_dump(spec(image)))
    rendered = subprocess.run(
        [sys.executable, "-m", "paddlegen", "render", str(spec_file), "--stdout"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    node.run("create", "namespace", NAMESPACE)
    node.apply(rendered)
    started = time.monotonic()
    condition = ""
    while time.monotonic() - started < TRAINING_TIMEOUT and not condition:
        condition = job_condition(node, "linear-regression")
        time.sleep(0.5)
    took = time.monotonic() - started
    log = node.run("logs", "-n", NAMESPACE, "job/linear-regression", check=False)
    assert condition == "Complete", f"{condition or 'not done'} after {took:.0f} s:\n{log.stdout}"
    assert_trained({"job/linear-regression": log.stdout}, 1)
    print(f"trained in {took:.1f} s")


def test_env_exports_the_references_of_both_paddle_images(node: Kube) -> None:
    """What a spec names to run on the node (with imagePullPolicy Never): Paddle 3.x, and
    Paddle 2.6 for parameter servers."""
    images = local_cluster().images
    done = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "local-cluster"), "env"],
        env={**os.environ, "PADDLEGEN_CLUSTER_DIR": str(node.state)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert f"export PADDLEGEN_PADDLE_IMAGE={images.PADDLE.reference}\n" in done.stdout
    assert f"export PADDLEGEN_PADDLE_PS_IMAGE={images.PADDLE_PS.reference}\n" in done.stdout
