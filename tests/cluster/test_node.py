"""Real training on a real node (`hack/local-cluster --with node`): a `job` spec rendered by
paddlegen, with the Paddle image `build` made, runs a small linear regression in Paddle to
completion under the real kubelet, containerd and runc."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import Kube, local_cluster

pytestmark = pytest.mark.node

NAMESPACE = "node-training"
TRAINING_TIMEOUT = 60  # seconds, a job's budget (issue 24)
# Linear regression on synthetic data (no dataset, no network): y = x.w + b, fitted by SGD.
TRAIN = """\
import numpy as np
import paddle

paddle.seed(0)
rng = np.random.default_rng(0)
x = rng.random((256, 4), dtype="float32")
y = x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25
model = paddle.nn.Linear(4, 1)
sgd = paddle.optimizer.SGD(learning_rate=0.2, parameters=model.parameters())
inputs, targets = paddle.to_tensor(x), paddle.to_tensor(y)
for step in range(300):
    loss = paddle.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    sgd.step()
    sgd.clear_grad()
    if step % 50 == 0 or step == 299:
        print(f"step {step} loss {float(loss):.6f}")
"""


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
            "command": ["python3", "-c", TRAIN],
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
    losses = [float(value) for value in re.findall(r"^step \d+ loss (\S+)$", log.stdout, re.M)]
    assert len(losses) == 7, log.stdout
    assert losses[-1] < losses[0] / 100, losses  # it learned: the fit is close
    print(f"trained in {took:.1f} s: loss {losses[0]:.4f} -> {losses[-1]:.6f}")
