"""spec.checkpoint: folder, attempt and time to save on every training pod, none on the data Job."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.spec.model import CHECKPOINT_GRACE
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.shared.jobset import RESTART_ATTEMPT
from tests.builders import rendered_objects, spec, volumes, workers
from tests.helpers import pod_templates

VOLUME = {
    "name": "ckpt",
    "mountPath": "/ckpt",
    "capacity": "10Gi",
    "accessModes": ["ReadWriteMany"],
    "nfs": {"server": "nfs.example", "path": "/exports"},
}


def render(workload: str, **fields: Any) -> dict[tuple[str, str], Any]:
    """The objects of a spec of ``workload`` with a checkpoint volume, two ranks unless it runs
    one pod."""
    data = spec(
        workload,
        metadata={"name": "ft", "namespace": "ml"},
        image="r/ft:v1",
        args=["train.py"],
        resources={"limits": {"memory": "8Gi"}},
        volumes=volumes(workload, VOLUME),
        **workers(workload),
        **fields,
    )
    return rendered_objects(data)


def pod_specs(objects: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    """Every pod template's spec in the objects, whatever nests it."""
    return [template["spec"] for template in pod_templates(list(objects.values()))]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_training_pod_gets_the_folder_the_attempt_and_time_to_save(workload):
    objects = render(workload, checkpoint={"volume": "ckpt", "path": "run-1"})
    pods = pod_specs(objects)
    assert pods
    for pod in pods:
        (paddle,) = [c for c in pod["containers"] if c["name"] in ("paddle", "node")]
        # a TrainJob gives the env to every node's container in its own spec.trainer
        trainer = objects.get(("TrainJob", "ft"), {}).get("spec", {}).get("trainer", {})
        env = {e["name"]: e for e in paddle.get("env", trainer.get("env"))}
        assert env["PADDLE_CHECKPOINT_DIR"] == {
            "name": "PADDLE_CHECKPOINT_DIR",
            "value": "/ckpt/run-1",
        }
        # a TrainJob's pods are a JobSet's, which annotates each with its restart attempt
        attempt = (
            {"valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{RESTART_ATTEMPT}']"}}}
            if workload == "trainjob"
            else {"value": "0"}
        )
        assert env["PADDLE_RESTART_ATTEMPT"] == {"name": "PADDLE_RESTART_ATTEMPT", **attempt}
        assert {"name": "ckpt", "mountPath": "/ckpt"} in paddle["volumeMounts"]
        # longer than the 30 s Paddle's launcher gives its processes after SIGTERM
        assert pod["terminationGracePeriodSeconds"] == CHECKPOINT_GRACE > 30


def test_the_folder_defaults_to_the_job_name_and_a_grace_given_is_kept():
    (pod,) = pod_specs(
        render("job", checkpoint={"volume": "ckpt"}, terminationGracePeriodSeconds=120)
    )
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["PADDLE_CHECKPOINT_DIR"] == "/ckpt/ft"
    assert pod["terminationGracePeriodSeconds"] == 120


def test_without_a_checkpoint_nothing_is_added():
    (pod,) = pod_specs(render("job"))
    names = {e["name"] for e in pod["containers"][0].get("env", [])}
    assert not names & {"PADDLE_CHECKPOINT_DIR", "PADDLE_RESTART_ATTEMPT"}
    assert "terminationGracePeriodSeconds" not in pod


def test_the_data_job_gets_no_checkpoint():
    prep = {"volume": "ckpt", "image": "r/data:v1"}
    objects = render("collective-job", checkpoint={"volume": "ckpt"}, dataPrep=prep)
    data = objects[("Job", "ft-data")]["spec"]["template"]["spec"]
    names = {e["name"] for e in data["containers"][0].get("env", [])}
    assert "PADDLE_CHECKPOINT_DIR" not in names
    assert "terminationGracePeriodSeconds" not in data
