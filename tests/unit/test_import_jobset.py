"""`paddlegen import` of group restarts written by hand (a JobSet, a TrainJob's own
TrainingRuntime changed), and what is refused or stays as it was."""

from __future__ import annotations

import copy

import pytest
import yaml

from paddlegen.errors import InputError
from tests.builders import HEADER, rendered_objects
from tests.unit.test_import import imported

HAND_WRITTEN = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: bert
  namespace: ml
spec:
  failurePolicy:
    maxRestarts: 2
    rules:
    - name: no-oom
      action: FailJobSet
      onJobFailureReasons: [PodFailurePolicy]
  startupPolicy: {startupPolicyOrder: InOrder}
  network: {subdomain: ranks}
  replicatedJobs:
  - name: trainer
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        activeDeadlineSeconds: 7200
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: paddle
              image: r/bert:v2
              command: [python, -m, paddle.distributed.launch, bert.py]
              env:
              - {name: EPOCHS, value: "3"}
              - {name: PADDLE_MASTER, value: "bert-trainer-0-0.ranks:9000"}
              resources: {limits: {memory: 8Gi}}
"""


def test_a_hand_written_jobset_is_a_collective_job_with_restarts_and_says_what_changes():
    result = imported(HAND_WRITTEN)
    spec = result.spec["spec"]
    assert spec["workload"] == "collective-job"
    assert spec["run"] == {"restarts": 2, "activeDeadlineSeconds": 7200}
    assert (spec["worker"], spec["collective"]) == ({"replicas": 2}, {"port": 9000})
    assert spec["command"] == ["python", "-m", "paddle.distributed.launch", "bert.py"]
    assert spec["env"] == [{"name": "EPOCHS", "value": "3"}]
    assert not [d for d in result.diagnostics if d.is_error]
    notes = {n.message: (n.kind, n.line, n.col) for n in result.notes}
    # rank 0 by the names the input gave: renamed together, so no note on PADDLE_MASTER
    assert not [m for m in notes if m.startswith("env PADDLE_MASTER")]
    said = {message.split(":")[0]: where for message, where in notes.items()}
    assert said['failurePolicy rule "no-oom" (action FailJobSet) is not carried over'] == (
        "lossy",
        10,
        7,
    )
    assert said['spec.startupPolicy.startupPolicyOrder = "InOrder"'] == ("lossy", 13, 19)
    assert said["the pods' subdomain ranks becomes bert"] == ("cosmetic", 14, 13)
    assert said["replicated job trainer becomes worker"] == ("cosmetic", 16, 5)
    assert said["backoffLimit 6 (the default) becomes 0"][0] == "lossy"
    assert said["failurePolicy gains rule NoNodeCount"][0] == "cosmetic"
    assert all(n.file == "in0.yaml" for n in result.notes)


def test_a_jobset_without_max_restarts_is_a_collective_job_without_restarts():
    text = HAND_WRITTEN.replace("    maxRestarts: 2\n", "")
    result = imported(text)
    assert "restarts" not in result.spec["spec"]["run"]
    (note,) = [n for n in result.notes if "maxRestarts" in n.message]
    assert note.kind == "cosmetic" and "fails at the first failure" in note.message


def _with(change) -> str:
    data = yaml.safe_load(HAND_WRITTEN)
    change(data["spec"]["replicatedJobs"])
    return yaml.safe_dump(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda jobs: jobs.append({**copy.deepcopy(jobs[0]), "name": "driver"}),
            r"JobSet/bert: 2 replicated jobs \(trainer, driver\): a collective-job is one group",
        ),
        (
            lambda jobs: jobs[0].update(replicas=2),
            "replicated job trainer makes 2 Jobs, each a group of ranks of its own",
        ),
        (
            lambda jobs: jobs[0]["template"]["spec"].update(completionMode="NonIndexed"),
            r"replicated job trainer is not Indexed \(completionMode NonIndexed\)",
        ),
        (
            lambda jobs: jobs[0]["template"]["spec"]["template"]["spec"]["containers"][0].update(
                command=["torchrun", "bert.py"], env=[]
            ),
            "replicated job trainer runs no Paddle launcher",
        ),
    ],
)
def test_a_jobset_that_is_no_group_of_paddle_ranks_is_refused(change, message):
    with pytest.raises(InputError, match=message):
        imported(_with(change))


def test_a_jobset_of_the_launchers_env_and_no_launcher_in_its_command_is_read():
    text = _with(
        lambda jobs: jobs[0]["template"]["spec"]["template"]["spec"]["containers"][0].update(
            command=["/entrypoint.sh"]
        )
    )
    assert imported(text).spec["spec"]["command"] == ["/entrypoint.sh"]


TRAINJOB = (
    HEADER
    + """\
metadata: {name: llm, namespace: ml}
spec:
  workload: trainjob
  image: r/llm:v3
  args: [train.py]
  resources: {limits: {memory: 8Gi}}
  worker: {replicas: 2}
  run: {restarts: 3}
"""
)


def trainjob_objects() -> tuple[dict, dict]:
    objects = rendered_objects(TRAINJOB)
    return (
        copy.deepcopy(dict(objects[("TrainJob", "llm")])),
        copy.deepcopy(dict(objects[("TrainingRuntime", "llm")])),
    )


def stream(*objects: dict) -> str:
    return "---\n".join(yaml.safe_dump(o, sort_keys=False) for o in objects)


def test_a_trainjobs_own_runtime_changed_by_hand_is_read_with_a_note_at_each_change():
    train_job, runtime = trainjob_objects()
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    node["template"]["spec"]["containers"][0]["image"] = "r/base:v1"
    node["template"]["spec"].pop("automountServiceAccountToken")
    runtime["spec"]["template"]["spec"]["failurePolicy"]["rules"] = []
    result = imported(stream(runtime, train_job))
    spec = result.spec["spec"]
    assert (spec["run"], "trainjob" in spec) == ({"restarts": 3}, False)
    notes = {n.message: n for n in result.notes}
    (image,) = [n for m, n in notes.items() if m.endswith('image = "r/base:v1": not carried over')]
    assert (image.kind, image.where, image.file, image.line > 0) == (
        "lossy",
        "TrainingRuntime/llm",
        "in0.yaml",
        True,
    )
    (lacking,) = [n for m, n in notes.items() if m.startswith("paddlegen's runtime sets")]
    assert lacking.lossy
    assert ".automountServiceAccountToken = false" in lacking.message
    assert 'spec.template.spec.failurePolicy.rules[0] = {"name": "NoNodeCount"' in lacking.message
    assert len(result.notes) == 2


def test_a_trainjobs_own_runtime_of_another_name_is_renamed():
    train_job, runtime = trainjob_objects()
    runtime["metadata"]["name"] = train_job["spec"]["runtimeRef"]["name"] = "llm-restarts"
    result = imported(stream(train_job, runtime))
    assert [(n.kind, str(n)) for n in result.notes] == [
        ("cosmetic", "TrainingRuntime/llm-restarts: renamed llm (paddlegen derives the name)")
    ]


def test_a_trainjob_whose_runtime_is_not_in_the_input_or_restarts_nothing_is_as_before():
    train_job, runtime = trainjob_objects()
    alone = imported(stream(train_job))
    assert alone.spec["spec"]["trainjob"] == {"runtime": "llm"}
    assert "run" not in alone.spec["spec"]
    assert [n.at for n in alone.lossy][:1] == [("spec", "runtimeRef", "kind")]
    runtime["spec"]["template"]["spec"]["failurePolicy"].pop("maxRestarts")
    without = imported(stream(train_job, runtime))
    assert without.spec == alone.spec
    assert "TrainingRuntime/llm: no spec counterpart; not imported" in map(str, without.lossy)


CHECKPOINT = (
    HEADER
    + """\
metadata: {name: ft}
spec:
  workload: collective-job
  image: r/ft:v1
  args: [train.py]
  resources: {limits: {memory: 8Gi}}
  worker: {replicas: 2}
  volumes:
  - {name: ckpt, mountPath: /ckpt, nfs: {server: nfs.example.com, path: /x}, capacity: 1Gi}
  - {name: scratch, mountPath: /scratch, emptyDir: {}}
  checkpoint: {volume: ckpt}
"""
)


def test_the_checkpoint_env_on_a_volume_that_cannot_hold_one_stays_env():
    objects = rendered_objects(CHECKPOINT)
    job = copy.deepcopy(dict(objects[("Job", "ft")]))
    assert imported(stream(job)).spec["spec"]["checkpoint"] == {"volume": "ckpt"}
    (container,) = job["spec"]["template"]["spec"]["containers"]
    (folder,) = [e for e in container["env"] if e["name"] == "PADDLE_CHECKPOINT_DIR"]
    folder["value"] = "/scratch/ft"  # an emptyDir: deleted with its pod
    spec = imported(stream(job)).spec["spec"]
    assert "checkpoint" not in spec
    assert spec["env"][0] == {"name": "PADDLE_CHECKPOINT_DIR", "value": "/scratch/ft"}
