"""The authoring commands through the CLI: init, explain, import, dockerfile, shell completion."""

from __future__ import annotations

import pytest
import yaml

from paddlegen import api
from paddlegen.authoring.dockerfile import parse_dockerfile
from paddlegen.cli import cli

STORAGE = [
    "none",
    "nfs://10.12.201.10/nas",
    "efs://fs-2cbf7385.us-west-2/",
    "cephfs://172.19.32.166:6789,172.19.32.167:6789/",
    "pvc://existing",
    "hostpath:///home/work/mfs",
    "dynamic://standard",
    "dynamic://",
]  # `dynamic: {}`: the cluster's default StorageClass


def init(runner, tmp_path, *args, name="demo.yaml", stdin=None):
    path = tmp_path / name
    result = runner.invoke(cli, ["init", str(path), *args], input=stdin)
    return result, path


def renders(path) -> list[str]:
    """The kinds a spec renders to (it must validate first)."""
    doc, _warnings = api.load_valid(path)
    return [m.kind for m in api.render_document(doc).manifests]


_WORKLOADS = [
    ("job", []),
    ("distributed-job", ["--workers", "3"]),
    ("paddlejob", ["--ps", "2", "--workers", "2"]),
    ("kubeflow-paddlejob", ["--ps", "1", "--workers", "2"]),
]


# distributed-job without storage is an error instead (tested below).
@pytest.mark.parametrize(
    ("workload", "roles", "storage"),
    [
        (workload, roles, storage)
        for workload, roles in _WORKLOADS
        for storage in STORAGE
        if not (workload == "distributed-job" and storage == "none")
    ],
)
def test_init_without_input_writes_a_spec_that_validates_and_renders(
    runner, tmp_path, workload, roles, storage
):
    result, path = init(
        runner,
        tmp_path,
        "--no-input",
        "--workload",
        workload,
        "--image",
        "registry.example.com/demo:v1",
        "--gpus",
        "1",
        "--volcano",
        "--storage",
        storage,
        *roles,
    )
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=https://paddlegen.dev/schemas/")
    assert "  # " in text  # commented
    kinds = renders(path)
    assert "PodGroup" in kinds
    assert ("PersistentVolume" in kinds) == any(s in storage for s in ("nfs", "efs", "ceph"))


def test_init_distributed_job_without_storage_says_what_is_missing(runner, tmp_path):
    result, path = init(
        runner, tmp_path, "--no-input", "--workload", "distributed-job", "--image", "r/d:v1"
    )
    assert result.exit_code == 1
    assert "no volume named 'data'" in result.stderr
    assert not path.exists()


def test_init_asks_for_what_flags_leave_out(runner, tmp_path):
    answers = (
        "\n".join(
            [
                "paddlejob",
                "",
                "r/demo:v1",
                "python3 train.py",
                "2",
                "4",
                "1",
                "y",
                "bogus",
                "nfs://10.0.0.5/data",
                "/data",
            ]
        )
        + "\n"
    )
    result, path = init(runner, tmp_path, "--namespace", "team", stdin=answers)
    assert result.exit_code == 0, result.output
    assert "Storage" in result.output and "is not one of" in result.output  # asked again
    spec = yaml.safe_load(path.read_text())
    assert spec["metadata"] == {"name": "demo", "namespace": "team"}  # the file name
    assert spec["spec"]["command"] == ["python3", "train.py"]
    assert (spec["spec"]["ps"], spec["spec"]["worker"]) == ({"replicas": 2}, {"replicas": 4})
    assert spec["spec"]["volumes"][0]["mountPath"] == "/data"
    assert spec["spec"]["scheduling"]["scheduler"] == "volcano"
    assert renders(path)[-1] == "PaddleJob"


def test_init_prints_to_stdout_and_never_replaces_a_file_unasked(runner, tmp_path):
    result = runner.invoke(cli, ["init", "-", "--no-input", "--name", "x1", "--image", "r/x:v1"])
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout)["metadata"]["name"] == "x1"
    path = tmp_path / "demo.yaml"
    path.write_text("mine\n")
    result, _ = init(runner, tmp_path, "--no-input", "--image", "r/x:v1")
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert path.read_text() == "mine\n"
    result, _ = init(runner, tmp_path, "--no-input", "--image", "r/x:v1", "--force")
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "args", [["--no-input"], ["--no-input", "--image", "r/x:v1", "--storage", "s3://bucket"]]
)
def test_init_usage_errors_are_exit_2(runner, tmp_path, args):
    result, _ = init(runner, tmp_path, *args)
    assert result.exit_code == 2


def test_explain_a_field(runner):
    result = runner.invoke(cli, ["explain", "spec.paddlejob.cleanPodPolicy"])
    assert result.exit_code == 0
    assert '"Always", "Never", "OnFailure", "OnCompletion"' in result.stdout
    assert "paddlejob  PaddleJob spec.cleanPodPolicy" in result.stdout


def test_explain_alone_lists_the_top_level_fields(runner):
    result = runner.invoke(cli, ["explain"])
    assert result.exit_code == 0
    for field in ("apiVersion", "kind", "metadata", "spec", "overlays"):
        assert f"\n  {field} " in result.stdout


def test_explain_an_unknown_field_is_exit_2(runner):
    result = runner.invoke(cli, ["explain", "spec.wokrer"])
    assert result.exit_code == 2
    assert "did you mean 'worker'" in result.stderr


JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: demo}
spec:
  template:
    spec:
      containers: [{name: main, image: "r/demo:v1", command: [python3, train.py]}]
      restartPolicy: Never
      hostNetwork: true
"""


def test_import_from_stdin_prints_the_spec_and_lists_what_it_left(runner):
    result = runner.invoke(cli, ["import", "-"], input=JOB)
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load(result.stdout)
    assert spec["spec"]["workload"] == "job"
    assert spec["spec"]["command"] == ["python3", "train.py"]
    assert "spec.template.spec.hostNetwork = true: not carried over" in result.stderr
    assert "container 'main' is named 'paddle'" in result.stderr


def test_import_writes_a_file_that_renders(runner, tmp_path):
    source = tmp_path / "job.yaml"
    source.write_text(JOB)
    out = tmp_path / "jobs" / "demo.yaml"
    result = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert renders(out) == ["Job"]


def test_import_exits_1_when_the_spec_it_makes_is_invalid(runner):
    result = runner.invoke(cli, ["import", "-"], input=JOB.replace('image: "r/demo:v1", ', ""))
    assert result.exit_code == 1
    assert "image-required" in result.stderr
    assert yaml.safe_load(result.stdout)["metadata"]["name"] == "demo"  # written all the same


def test_import_without_a_training_object_is_exit_2(runner):
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
    result = runner.invoke(cli, ["import", "-"], input=pvc)
    assert result.exit_code == 2
    assert "no training object" in result.stderr and "PersistentVolumeClaim/data" in result.stderr


BUILD = """\
  build:
    base: ubuntu:18.04
    apt: [python3, python3-pip]
    pip: [paddlepaddle==2.0.0]
    package: {src: wide_and_deep, dest: /wide_and_deep}
    entrypoint: [python3, train.py]
"""


def test_dockerfile_from_the_build_section(runner, tmp_path):
    result, spec = init(runner, tmp_path, "--no-input", "--image", "r/demo:v1")
    spec.write_text(spec.read_text() + BUILD)
    result = runner.invoke(cli, ["dockerfile", str(spec)])
    assert result.exit_code == 0, result.output
    assert [i.keyword for i in parse_dockerfile(result.stdout)] == [
        "FROM",
        "RUN",
        "RUN",
        "COPY",
        "WORKDIR",
        "ENTRYPOINT",
    ]
    assert "docker build -t r/demo:v1 ." in result.stdout
    out = tmp_path / "Dockerfile"
    assert runner.invoke(cli, ["dockerfile", str(spec), "-o", str(out)]).exit_code == 0
    assert out.read_text() == result.stdout


def test_dockerfile_refuses_a_spec_without_build_or_with_a_bad_one(runner, tmp_path):
    result, spec = init(runner, tmp_path, "--no-input", "--image", "r/demo:v1")
    result = runner.invoke(cli, ["dockerfile", str(spec)])
    assert result.exit_code == 2 and "no spec.build section" in result.stderr
    spec.write_text(spec.read_text() + BUILD.replace("python3-pip]", "'python3; rm -rf /']"))
    result = runner.invoke(cli, ["dockerfile", str(spec)])
    assert result.exit_code == 1 and "is not a Debian package name" in result.stderr


def complete(runner, words: str) -> list[str]:
    """What bash completion offers after ``words`` (the last word is being typed)."""
    result = runner.invoke(
        cli,
        [],
        prog_name="paddlegen",
        env={
            "_PADDLEGEN_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
        },
    )
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


def test_completion_of_spec_paths_workloads_and_fields(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs").mkdir()
    (tmp_path / ".git").mkdir()
    for name in ("a.yaml", "b.yml", "notes.txt"):
        (tmp_path / name).write_text("")
    assert complete(runner, "paddlegen dockerfile ") == ["a.yaml", "b.yml", "jobs/"]
    assert complete(runner, "paddlegen import a") == ["a.yaml"]
    (tmp_path / "jobs" / "c.yaml").write_text("")
    assert complete(runner, "paddlegen import jobs/") == ["jobs/c.yaml"]
    assert complete(runner, "paddlegen init --workload pa") == ["paddlejob"]
    assert "spec.worker.replicas" in complete(runner, "paddlegen explain spec.worker.")
