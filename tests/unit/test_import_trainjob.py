"""`paddlegen import` of a Kubeflow Trainer TrainJob: what a spec cannot carry is a note at the
field's line and column in the input, and the spec written still validates."""

from __future__ import annotations

import copy

import pytest
import yaml

from paddlegen.authoring.importer import import_manifests
from paddlegen.cli import cli
from paddlegen.errors import ManifestError
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads.shared import launcher
from tests.builders import HEADER, rendered_objects
from tests.conftest import DATA

TORCH = DATA / "import" / "torch-trainjob.yaml"
SPEC = """\
metadata: {name: resnet, namespace: ml}
spec:
  workload: trainjob
  image: r/resnet:v1
  resources: {limits: {memory: 8Gi}}
  args: [train.py]
  worker: {replicas: 3}
"""


def rendered_trainjob(body: str = SPEC) -> dict:
    return copy.deepcopy(dict(rendered_objects(HEADER + body)[("TrainJob", "resnet")]))


def imported(obj: dict, name: str = "in.yaml"):
    return import_manifests([(name, yaml.safe_dump(obj, sort_keys=False))])


def marked_lines(path) -> dict[int, str]:
    """The lines the fixture marks with their own number (`# line N`)."""
    lines = path.read_text("utf-8").splitlines()
    return {i: line for i, line in enumerate(lines, 1) if line.rstrip().endswith(f"# line {i}")}


def test_what_a_torch_trainjob_holds_beyond_a_spec_is_a_lossy_note_at_its_line():
    result = import_manifests([(str(TORCH), TORCH.read_text("utf-8"))])
    assert all(n.file == str(TORCH) and n.line for n in result.notes)
    # a note about no one field of it is at the object (line 5)
    found = {(n.line, n.col): n.message for n in result.notes if n.line != 5}
    # every marked line has its note, each at the field's key
    marked = marked_lines(TORCH)
    assert sorted(line for line, _ in found) == sorted(marked)
    for (line, col), message in found.items():
        key = marked[line][col - 1 :].split(":")[0].lstrip("- {")
        assert key in ("name", "kind", "suspend", "trainer", "command", "numProcPerNode",
                       "manager", "initContainers"), (line, message)  # fmt: skip
    said = {line: message for (line, _), message in found.items()}
    assert "runtime torch-distributed is not paddlegen's" in said[12]
    assert 'runtimeRef.kind "TrainingRuntime" becomes "ClusterTrainingRuntime"' in said[13]
    assert said[14] == "spec.suspend = true: not carried over"
    assert 'env PADDLE_NNODES was not set; paddlegen sets "2"' in said[15]
    assert "runs after paddlegen's master wrapper" in said[17]
    assert said[19] == "spec.trainer.numProcPerNode = 4: not carried over"
    assert "env PADDLE_MASTER is not carried over: paddlegen's runtime sets it" in said[21]
    assert said[23] == (
        "runtimePatches[0] (manager kueue.x-k8s.io/manager) is Kueue's, which its webhook adds "
        "to every TrainJob: not carried over (scheduling.kueue queues the job)"
    )
    assert "initContainers is not carried over" in said[45]
    assert [n.line for n in result.notes if n.line != 5 and not n.lossy] == [23]  # Kueue's
    # ... and the spec it writes is valid: the runtime named, nothing the workload refuses
    assert not [d for d in result.diagnostics if d.is_error]
    spec = result.spec["spec"]
    assert spec["trainjob"] == {"runtime": "torch-distributed"}
    assert spec["command"] == ["torchrun", "train.py"]
    assert (spec["worker"], spec["nodeSelector"]) == ({"replicas": 2}, {"pool": "gpu"})
    assert "initContainers" not in spec and "env" not in spec


def test_the_cli_names_each_field_at_its_line_and_column_and_exits_1(runner, tmp_path):
    out = tmp_path / "bert.yaml"
    result = runner.invoke(cli, ["import", str(TORCH), "-o", str(out)])
    assert result.exit_code == 1
    assert (
        f"{TORCH}:19:5: warning: TrainJob/bert: spec.trainer.numProcPerNode = 4: not carried "
        "over [import-lossy]" in result.stderr.splitlines()
    )
    assert "Traceback" not in result.stderr
    assert build.render_document(parse_spec(out.read_text("utf-8"), str(out))).manifests


def test_kueues_patch_read_back_is_dropped_with_a_cosmetic_note_and_paddlegens_own_maps():
    """Kueue's webhook adds its patch to every TrainJob, queued or not (v0.19.2
    trainjob_webhook.go:91-102): a read-back carries it, and it is Kueue's to write."""
    obj = rendered_trainjob()
    obj["spec"]["runtimePatches"].insert(
        0,
        {
            "manager": "kueue.x-k8s.io/manager",
            "time": "2026-11-27T10:00:00Z",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node"}]}}},
        },
    )
    result = imported(obj)
    (note,) = result.notes
    assert not note.lossy and note.at == ("spec", "runtimePatches", 0, "manager")
    assert note.line > 0
    assert result.spec["spec"]["worker"] == {"replicas": 3}


def test_a_trainjob_on_paddlegens_runtime_without_a_patch_or_command_runs_the_launcher():
    """Without a command the runtime's runs: in paddlegen's runtimes the wrapper and the
    launcher, which a spec without a command renders too."""
    obj = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "tiny"},
        "spec": {
            "runtimeRef": {"name": "paddle-distributed-volcano"},
            "trainer": {
                "image": "r/t:v1",
                "args": ["train.py"],
                "numNodes": 2,
                "env": [{"name": "PADDLE_NNODES", "value": "2"}],
                "resourcesPerNode": {"limits": {"memory": "1Gi"}},
            },
        },
    }
    result = imported(obj)
    spec = result.spec["spec"]
    assert "command" not in spec
    assert spec["scheduling"] == {"scheduler": "volcano"}  # the queue: the spec's default
    assert "trainjob" not in spec
    # the pods ran without the restricted profile paddlegen's own patch gives them: so does
    # the spec's (security.restricted false), which the only note says
    (note,) = result.notes
    assert not note.lossy and "spec.security.restricted is false" in note.message
    assert spec["security"] == {"restricted": False}
    again = rendered_objects(
        HEADER + yaml.safe_dump({k: result.spec[k] for k in ("metadata", "spec")})
    )
    assert again[("TrainJob", "tiny")]["spec"]["trainer"]["command"] == [
        *launcher.WRAPPER,
        *launcher.LAUNCHER,
    ]


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ([{"name": "PADDLE_NNODES", "value": "5"}], 'env PADDLE_NNODES "5" becomes "3"'),
        ([], 'env PADDLE_NNODES was not set; paddlegen sets "3"'),
        (
            [{"name": "PADDLE_NNODES", "value": "3"}, {"name": "POD_IP", "value": "1.2.3.4"}],
            "env POD_IP is not carried over",
        ),
    ],
)
def test_the_contracts_env_in_the_trainer_is_derived_and_a_difference_said(env, said):
    obj = rendered_trainjob()
    obj["spec"]["trainer"]["env"] = env
    result = imported(obj)
    (note,) = [n for n in result.notes if n.lossy]
    assert said in note.message and note.line > 0
    assert "env" not in result.spec["spec"]


def test_a_runtime_ref_of_another_group_or_kind_is_lossy():
    obj = rendered_trainjob()
    obj["spec"]["runtimeRef"].update(apiGroup="example.com")
    result = imported(obj)
    (note,) = result.notes
    assert note.at == ("spec", "runtimeRef", "apiGroup") and note.lossy
    assert 'runtimeRef.apiGroup "example.com" becomes "trainer.kubeflow.org"' in note.message


QUEUED = SPEC + "  scheduling: {scheduler: volcano, kueue: {queue: team, priorityClass: low}}\n"


def test_a_queued_trainjob_on_the_queued_runtime_reads_back_without_a_note():
    obj = rendered_trainjob(QUEUED)
    assert obj["spec"]["runtimeRef"]["name"] == "paddle-distributed-volcano-queued"
    result = imported(obj)
    assert result.notes == []
    scheduling = result.spec["spec"]["scheduling"]
    assert scheduling["kueue"] == {"queue": "team", "priorityClass": "low"}
    assert scheduling["scheduler"] == "volcano"
    assert "trainjob" not in result.spec["spec"]  # paddlegen's runtime: the render picks it


@pytest.mark.parametrize(
    ("body", "runtime", "becomes"),
    [
        (SPEC, "paddle-distributed-queued", "paddle-distributed"),
        (QUEUED, "paddle-distributed-volcano", "paddle-distributed-volcano-queued"),
    ],
)
def test_a_queued_runtime_without_kueues_label_or_the_other_way_round_is_lossy(
    body, runtime, becomes
):
    obj = rendered_trainjob(body)
    obj["spec"]["runtimeRef"]["name"] = runtime
    result = imported(obj)
    (note,) = result.notes
    assert note.lossy and note.at == ("spec", "runtimeRef", "name") and note.line > 0
    assert f"runtime {runtime} becomes {becomes}" in note.message
    again = build.render_document(parse_spec(result.text.encode(), "imported.yaml"))
    (train_job,) = [m.obj for m in again.manifests if m.kind == "TrainJob"]
    assert train_job["spec"]["runtimeRef"]["name"] == becomes


@pytest.mark.parametrize(
    ("change", "at", "said"),
    [
        (lambda s: s["trainer"].update(numNodes="two"), "spec.trainer.numNodes",
         '"two" (a string), where the API takes an integer'),
        (lambda s: s["trainer"].update(env=["PADDLE_NNODES=3"]), "spec.trainer.env[0]",
         '"PADDLE_NNODES=3" (a string), where the API takes an object'),
        (lambda s: s.update(runtimePatches={"manager": "x"}), "spec.runtimePatches",
         "an object, where the API takes a list"),
        (lambda s: s.update(trainer=True), "spec.trainer",
         "true (a boolean), where the API takes an object"),
        (lambda s: s["runtimeRef"].update(name=7), "spec.runtimeRef.name",
         "7 (an integer), where the API takes a string"),
    ],
)  # fmt: skip
def test_a_field_of_another_type_is_refused_at_it_not_a_traceback(change, at, said):
    obj = rendered_trainjob()
    change(obj["spec"])
    with pytest.raises(ManifestError) as refused:
        imported(obj)
    (found,) = refused.value.diagnostics
    assert (found.path, found.message) == (f"TrainJob/resnet {at}", said)
    assert found.file == "in.yaml" and found.line > 0 and found.rule == "import-shape"
