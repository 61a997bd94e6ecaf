"""Devices per pod: `gpus` writes its accelerator's limit, and the launcher counts them itself."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from paddlegen.pipeline import build
from tests.builders import HEADER, rendered_objects
from tests.conftest import ROOT


def example(name: str) -> dict[tuple[str, str], Any]:
    (rendered,) = build.render_specs([ROOT / "examples" / name])
    objects = [yaml.safe_load(t) for p, t in rendered.plan.items() if "kustomization" not in p]
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def container(template: dict[str, Any]) -> dict[str, Any]:
    """The one container of a pod template."""
    (found,) = template["spec"]["containers"]
    return dict(found)


def test_eight_gpus_per_pod_are_eight_ranks_the_launcher_starts_itself():
    paddle = container(example("collective-8gpu.yaml")[("Job", "resnet-8gpu")]["spec"]["template"])
    assert paddle["resources"]["limits"] == {"memory": "96Gi", "nvidia.com/gpu": "8"}
    env = {e["name"]: e.get("value") for e in paddle["env"]}
    assert env["PADDLE_NNODES"] == "4"  # the pods, not the ranks
    # Nothing pins the devices or the process count: the launcher starts one process per
    # device it sees (paddle 3.3.1 launch/controllers/controller.py:277-287).
    pins = {"PADDLE_NPROC_PER_NODE", "PADDLE_DEVICES", "CUDA_VISIBLE_DEVICES"}
    assert not pins & set(env)
    assert paddle["command"][3:] == ["python3", "-m", "paddle.distributed.launch"]
    assert paddle["args"] == ["train.py", "--epochs", "90"]


def test_an_ascend_job_asks_for_npus_and_no_gpu():
    paddle = container(
        example("collective-ascend.yaml")[("Job", "ernie-ascend")]["spec"]["template"]
    )
    assert paddle["resources"]["limits"] == {"memory": "256Gi", "huawei.com/Ascend910": "8"}
    assert {e["name"]: e.get("value") for e in paddle["env"]}["PADDLE_NNODES"] == "2"


ACCELERATED = """\
metadata: {name: xpu}
spec:
  workload: WORKLOAD
  image: r/train:v1
  resources: {limits: {memory: 8Gi}}
  args: [train.py]
  accelerator: kunlunxin.com/xpu
  gpus: 4
  shm: 16Gi
  worker: {replicas: 2}
"""


@pytest.mark.parametrize(
    ("workload", "kind", "limits_of"),
    [
        ("trainjob", "TrainJob", lambda o: o["spec"]["trainer"]["resourcesPerNode"]["limits"]),
        (
            "kubeflow-paddlejob",
            "PaddleJob",
            lambda o: container(o["spec"]["paddleReplicaSpecs"]["Worker"]["template"])["resources"][
                "limits"
            ],
        ),
        (
            "paddlejob",
            "PaddleJob",
            lambda o: container(o["spec"]["worker"]["template"])["resources"]["limits"],
        ),
    ],
)
def test_every_workload_writes_the_accelerators_limit(workload, kind, limits_of):
    objects = rendered_objects(HEADER + ACCELERATED.replace("WORKLOAD", workload))
    assert limits_of(objects[(kind, "xpu")]) == {"memory": "8Gi", "kunlunxin.com/xpu": "4"}
