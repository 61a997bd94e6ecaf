"""spec.dataPrep (seeds 001, 004): the `<name>-data` Job, with every workload."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paddlegen.pipeline import build
from tests.builders import HEADER, render_file

VOLUMES = """\
  volumes:
    - {name: data, mountPath: /home/jobpath, hostPath: {path: /home/work/mfs}}
    - {name: scratch, mountPath: /scratch, emptyDir: {}}
"""


def render(tmp_path: Path, body: str) -> build.Rendered:
    return render_file(tmp_path, HEADER + body)


def data_job(rendered: build.Rendered) -> dict:
    (job,) = [m.obj for m in rendered.manifests if m.name == f"{rendered.job.name}-data"]
    return job


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"]}


DISTRIBUTED = (
    """\
metadata: {name: pcj}
spec:
  workload: distributed-job
  image: paddlepaddle/paddle-tutorial:k8s_train
  worker: {replicas: 3}
  shm: 1Gi
  gpus: 1
  env: [{name: EPOCHS, value: "10"}]
  nodeSelector: {storage: mfs}
  imagePullPolicy: Always
"""
    + VOLUMES
    + """\
  distributed: {volume: data, trainConfigDir: quick_start}
  dataPrep: {image: paddlepaddle/paddle-tutorial:k8s_data, volume: data}
"""
)


def test_data_job_splits_one_part_per_trainer_into_the_job_folder(tmp_path):
    job = data_job(render(tmp_path, DISTRIBUTED))
    assert (job["apiVersion"], job["kind"], job["metadata"]["name"]) == (
        "batch/v1",
        "Job",
        "pcj-data",
    )
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["name"] == "paddle"
    assert container["image"] == "paddlepaddle/paddle-tutorial:k8s_data"
    # OUT_DIR is where the trainers read: <JOB_PATH>/<JOB_NAME>; one part per trainer.
    assert env_of(container) == {"OUT_DIR": "/home/jobpath/pcj", "SPLIT_COUNT": "3"}


def test_data_job_mounts_only_its_volume_and_takes_no_training_settings(tmp_path):
    pod = data_job(render(tmp_path, DISTRIBUTED))["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["volumeMounts"] == [{"name": "data", "mountPath": "/home/jobpath"}]
    assert pod["volumes"] == [{"name": "data", "hostPath": {"path": "/home/work/mfs"}}]
    # No GPUs, training env, start command, ports or service account: those are the trainers'.
    # Only the default requests every container gets.
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"}}
    assert "command" not in container
    assert "ports" not in container and "serviceAccountName" not in pod
    # Placement and pull policy follow the spec-wide defaults: the data must land where the
    # trainers read it (here, nodes that mount the distributed file system).
    assert pod["nodeSelector"] == {"storage": "mfs"}
    assert container["imagePullPolicy"] == "Always"


def test_data_job_is_applied_before_the_training_job(tmp_path):
    rendered = render(tmp_path, DISTRIBUTED)
    jobs = [m.name for m in rendered.manifests if m.kind == "Job"]
    assert jobs == ["pcj-data", "pcj"]
    kustomization = yaml.safe_load(rendered.plan["kustomization.yaml"])
    files = kustomization["resources"]
    assert files.index("batch_v1_job_pcj-data.yaml") < files.index("batch_v1_job_pcj.yaml")


def test_split_count_and_out_dir_can_be_set(tmp_path):
    body = DISTRIBUTED.replace(
        "volume: data}\n",
        "volume: data, splitCount: 5, "
        "outDir: /home/jobpath/pcj/, command: [sh, -c], "
        "args: [./split.sh]}\n",
    )
    (container,) = data_job(render(tmp_path, body))["spec"]["template"]["spec"]["containers"]
    assert env_of(container) == {"OUT_DIR": "/home/jobpath/pcj/", "SPLIT_COUNT": "5"}
    assert (container["command"], container["args"]) == (["sh", "-c"], ["./split.sh"])


def test_image_defaults_to_the_spec_image(tmp_path):
    body = DISTRIBUTED.replace("image: paddlepaddle/paddle-tutorial:k8s_data, ", "")
    (container,) = data_job(render(tmp_path, body))["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "paddlepaddle/paddle-tutorial:k8s_train"


@pytest.mark.parametrize(
    "workload, roles",
    [
        ("job", ""),
        ("paddlejob", "  ps: {replicas: 2}\n  worker: {replicas: 2}\n"),
        ("kubeflow-paddlejob", "  worker: {replicas: 4}\n"),
        ("collective-job", "  args: [train.py]\n  worker: {replicas: 3}\n"),
    ],
)
def test_every_workload_gets_the_data_job_first(tmp_path, workload, roles):
    body = (
        f"metadata: {{name: demo}}\nspec:\n  workload: {workload}\n  image: img:1\n"
        + roles
        + VOLUMES
        + "  dataPrep: {volume: data}\n"
    )
    rendered = render(tmp_path, body)
    # (a collective-job's Service, which names the pods, before them all)
    names = [m.name for m in rendered.manifests if m.kind != "Service"]
    assert names[0] == "demo-data" and names[-2:] == ["demo", "demo-run"]
    trainers = {"job": 1, "paddlejob": 2, "kubeflow-paddlejob": 4, "collective-job": 3}[workload]
    (container,) = data_job(rendered)["spec"]["template"]["spec"]["containers"]
    assert env_of(container) == {"OUT_DIR": "/home/jobpath/demo", "SPLIT_COUNT": str(trainers)}


def test_no_data_prep_no_data_job(tmp_path):
    rendered = render(
        tmp_path,
        DISTRIBUTED.replace(
            "  dataPrep: {image: paddlepaddle/paddle-tutorial:k8s_data, volume: data}\n", ""
        ),
    )
    assert [m.name for m in rendered.manifests if m.kind == "Job"] == ["pcj"]
