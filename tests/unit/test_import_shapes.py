"""`paddlegen import` refuses an object the API server would refuse for a field's type or a
required field it lacks, at that field's line and column, before any importer walks it."""

from __future__ import annotations

import pytest

from paddlegen.authoring.importer import import_jobs
from paddlegen.cli import cli
from paddlegen.errors import ManifestError

JOB = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n"
FLOW = "apiVersion: batch.paddlepaddle.org/v1\nkind: PaddleJob\nmetadata: {name: x}\n"
KUBEFLOW = "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: x}\n"
CONTAINER = "{name: a, image: 'r/a:v1'}"
GOOD_JOB = JOB + f"spec: {{template: {{spec: {{containers: [{CONTAINER}]}}}}}}\n"


@pytest.mark.parametrize(
    ("text", "at", "said"),
    [
        (JOB + "spec: []\n", (4, 1, "Job/x spec"), "a list, where the API takes an object"),
        (JOB + "spec: {template: {spec: {containers: x}}}\n",
         (4, 26, "Job/x spec.template.spec.containers"),
         '"x" (a string), where the API takes a list'),
        (JOB.replace("{name: x}", "{name: x, labels: [a]}") + "spec: {template: {}}\n",
         (3, 21, "Job/x metadata.labels"), "a list, where the API takes an object"),
        (JOB + "spec: {parallelism: true, template: {}}\n", (4, 8, "Job/x spec.parallelism"),
         "true (a boolean), where the API takes an integer"),
        # A field the API requires: said at the object that lacks it.
        (JOB + "spec: {}\n", (4, 1, "Job/x spec.template"), "required field is missing"),
        (JOB + "spec:\n  template:\n    spec:\n      containers: [{image: 'r/a:v1'}]\n",
         (7, 20, "Job/x spec.template.spec.containers[0].name"), "required field is missing"),
        (JOB + "spec:\n  template:\n    spec:\n      containers: [" + CONTAINER + "]\n"
         "      volumes: [{name: data, persistentVolumeClaim: {}}]\n",
         (8, 30, "Job/x spec.template.spec.volumes[0].persistentVolumeClaim.claimName"),
         "required field is missing"),
        (JOB + "spec:\n  template:\n    spec:\n      containers:\n"
         "      - {name: a, resources: {limits: {cpu: [2]}}}\n",
         (8, 40, "Job/x spec.template.spec.containers[0].resources.limits.cpu"),
         "a list, where the API takes a string or a number"),
        (FLOW + "spec: {worker: []}\n", (4, 8, "PaddleJob/x spec.worker"),
         "a list, where the API takes an object"),
        (FLOW + "spec: {worker: {replicas: 2, template: {spec: {containers: {a: 1}}}}}\n",
         (4, 48, "PaddleJob/x spec.worker.template.spec.containers"),
         "an object, where the API takes a list"),
        (KUBEFLOW + "spec: {paddleReplicaSpecs: {Worker: {template: []}}}\n",
         (4, 38, "PaddleJob/x spec.paddleReplicaSpecs.Worker.template"),
         "a list, where the API takes an object"),
        # An object around the job is checked too: a stray PVC would reach the volume mapper.
        ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: d}\nspec: []\n---\n"
         + GOOD_JOB, (4, 1, "PersistentVolumeClaim/d spec"),
         "a list, where the API takes an object"),
    ],
)  # fmt: skip
def test_a_field_of_another_type_or_missing_is_refused_at_its_line(text, at, said):
    with pytest.raises(ManifestError) as refused:
        import_jobs([("in.yaml", text)])
    (found,) = refused.value.diagnostics
    assert (found.line, found.col, found.path) == at
    assert (found.file, found.message, found.rule) == ("in.yaml", said, "import-shape")


def test_only_types_and_required_fields_count_not_values():
    # No image (optional to the API), an unknown field, a restartPolicy no enum holds, an
    # int-or-string port given as a string: the importer's to note, or the spec's to refuse.
    text = JOB + (
        "spec:\n  template:\n    spec:\n      restartPolicy: Sometimes\n      containers:\n"
        "      - {name: a, frobnicate: 1, ports: [{containerPort: 1, name: p}],\n"
        "         livenessProbe: {httpGet: {port: p}}}\n"
    )
    (job,) = import_jobs([("in.yaml", text)]).jobs
    assert job.spec["spec"]["workload"] == "job"


def test_the_cli_says_where_exits_1_and_writes_nothing(runner, tmp_path):
    source = tmp_path / "job.yaml"
    source.write_text(JOB + "spec:\n  template: {spec: {containers: x}}\n", encoding="utf-8")
    out = tmp_path / "spec.yaml"
    result = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr and not out.exists()
    assert result.stderr.startswith(
        f"{source}:5:21: error: Job/x spec.template.spec.containers: "
        '"x" (a string), where the API takes a list [import-shape]\n'
    )


@pytest.mark.parametrize(
    ("pod", "rule", "at"),
    [
        ("{containers: []}", "image-required", "$.spec"),
        ("{containers: [{name: a, image: 'r/a:v1', resources: {limits: {nvidia.com/gpu: x}}}]}",
         "schema", "$.spec.gpus"),
    ],
)  # fmt: skip
def test_values_the_api_refuses_but_no_schema_types_are_the_specs_errors(pod, rule, at):
    # No container (the API requires one), a GPU count that is no whole number: each was an
    # internal error in the pod mapper; the spec is written and its validation says why.
    (job,) = import_jobs([("in.yaml", JOB + f"spec: {{template: {{spec: {pod}}}}}\n")]).jobs
    assert [(d.rule, d.path) for d in job.diagnostics if d.is_error] == [(rule, at)]
