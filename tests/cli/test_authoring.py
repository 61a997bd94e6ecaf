"""The authoring commands through the CLI: init, explain, import, dockerfile, shell completion."""

from __future__ import annotations

import json

import pytest
import yaml

from paddlegen.authoring.dockerfile import parse_dockerfile
from paddlegen.cli import cli
from paddlegen.pipeline import build, load
from tests.conftest import DATA
from tests.helpers import LOSSY_JOB

STORAGE = [
    "none",
    "nfs://10.12.201.10/nas",
    "efs://fs-2cbf7385.us-west-2/",
    "cephfs://5e5b7ae6-2f4e-4c2a-9f0e-3b1d2c6a7f10/cephfs/volumes/training",
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
    doc, _warnings = load.load_valid(path)
    return [m.kind for m in build.render_document(doc).manifests]


_WORKLOADS = [
    ("job", []),
    ("distributed-job", ["--workers", "3"]),
    ("paddlejob", ["--ps", "2", "--workers", "2", "--ps-gpus", "1"]),
    ("kubeflow-paddlejob", ["--ps", "1", "--workers", "2", "--ps-gpus", "1"]),
    ("collective-job", ["--workers", "3"]),
    ("trainjob", ["--workers", "3"]),
]
# The combinations init refuses: the distributed-job image reads from a shared volume, and
# the default StorageClass cannot be trusted with a volume several pods share.
REFUSED = {("distributed-job", "none"), *((w, "dynamic://") for w, _ in _WORKLOADS if w != "job")}


@pytest.mark.parametrize(
    ("workload", "roles", "storage"),
    [(workload, roles, storage) for workload, roles in _WORKLOADS for storage in STORAGE],
)
def test_init_without_input_writes_only_specs_validate_accepts_without_findings(
    runner, tmp_path, workload, roles, storage
):
    args = ["--workload", workload, "--image", "registry.example.com/demo:v1", "--gpus", "1"]
    if storage.startswith("cephfs"):
        args += ["--namespace", "team"]  # where the CSI driver's Secret is
    result, path = init(
        runner, tmp_path, "--no-input", *args, "--volcano", "--storage", storage, *roles
    )
    if (workload, storage) in REFUSED:
        assert result.exit_code == 2
        assert "Invalid value for '--storage' (default 'none')" not in result.stderr
        said = (
            "workload 'distributed-job' needs storage"
            if storage == "none"
            else "volume 'data' is shared by"  # then: "so asks for ReadWriteMany from ..."
        )
        assert f"Invalid value for '--storage': {said}" in result.stderr
        assert not path.exists()
        return
    assert result.exit_code == 0, result.output
    checked = runner.invoke(cli, ["validate", str(path)])
    assert checked.exit_code == 0, checked.output
    assert checked.stderr == "1 spec valid\n"  # no error, no warning
    text = path.read_text()
    # outside a git repository no schema file is looked for: no modeline, a note says why
    assert not text.startswith("# yaml-language-server")
    assert "in no git repository" in result.stderr
    assert "  # " in text  # commented
    kinds = renders(path)
    # The gang's PodGroup is made by whoever makes the pods (an operator, or Volcano for a Job)
    assert "PodGroup" not in kinds
    assert ("PersistentVolume" in kinds) == any(s in storage for s in ("nfs", "efs", "ceph"))


def test_init_distributed_job_without_storage_names_the_flag_to_give(runner, tmp_path):
    result, path = init(
        runner, tmp_path, "--no-input", "--workload", "distributed-job", "--image", "r/d:v1"
    )
    assert result.exit_code == 2
    assert (
        "Invalid value for '--storage' (default 'none'): workload 'distributed-job' needs "
        "storage: its image reads the trainer config and the data from a shared volume"
    ) in result.stderr
    assert not path.exists()
    result, path = init(
        runner, tmp_path, "--workload", "distributed-job", "--image", "r/d:v1",
        "--storage", "pvc://training", "--no-input",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert spec["distributed"]["volume"] == spec["volumes"][0]["name"] == "data"
    assert "# the shared volume with the trainer config and data (JOB_PATH)" in path.read_text()


def test_init_cephfs_is_the_csi_driver_and_says_what_it_needs(runner, tmp_path):
    base = ["--no-input", "--image", "r/d:v1", "--namespace", "team"]
    result, path = init(runner, tmp_path, *base, "--storage", "cephfs://ceph-a/cephfs/vol")
    assert result.exit_code == 0, result.output
    (volume,) = yaml.safe_load(path.read_text())["spec"]["volumes"]
    assert volume["cephfs"] == {
        "clusterID": "ceph-a",
        "fsName": "cephfs",
        "secretName": "cephfs-secret",
        "path": "/vol",
    }
    assert "# userID and userKey, in the job's namespace" in path.read_text()
    # Monitors are the in-tree plugin's: refused, with the form that works.
    result, path = init(
        runner, tmp_path, *base, "--storage", "cephfs://172.19.32.166:6789/", name="mon.yaml"
    )
    assert result.exit_code == 2 and not path.exists()
    assert "Invalid value for '--storage': storage 'cephfs://172.19.32.166:6789/' names Ceph " in (
        result.stderr
    )
    assert "use cephfs://CLUSTER-ID/FS-NAME[/PATH]" in result.stderr
    # The Secret's namespace is the job's: without one, init names the flag to give.
    result, path = init(
        runner, tmp_path, "--no-input", "--image", "r/d:v1", "--storage", "cephfs://c/fs",
        name="nons.yaml",
    )  # fmt: skip
    assert result.exit_code == 2 and not path.exists()
    assert "Invalid value for '--namespace' (default None): cephfs storage needs a namespace" in (
        result.stderr
    )


def prompted(runner, tmp_path, answers, *args):
    """init asking every question, fed ``answers`` one per line; the file is demo.yaml."""
    return init(runner, tmp_path, *args, stdin="".join(f"{a}\n" for a in answers))


def test_init_asks_for_what_flags_leave_out(runner, tmp_path):
    answers = [
        "paddlejob",
        "",  # the file name
        "r/demo:v1",
        "python3 train.py",
        "2",
        "4",
        "1",
        "0",  # GPUs per parameter server
        "y",
        "nfs://10.0.0.5/data",
        "/data",
    ]
    result, path = prompted(runner, tmp_path, answers, "--namespace", "team")
    assert result.exit_code == 0, result.output
    assert "Error" not in result.output
    spec = yaml.safe_load(path.read_text())
    assert spec["metadata"] == {"name": "demo", "namespace": "team"}  # the file name
    assert spec["spec"]["command"] == ["python3", "train.py"]
    assert (spec["spec"]["ps"]["replicas"], spec["spec"]["worker"]) == (
        2,
        {"replicas": 4, "gpus": 1},
    )
    assert spec["spec"]["shm"] == "4Gi"
    assert spec["spec"]["volumes"][0]["mountPath"] == "/data"
    assert spec["spec"]["scheduling"]["scheduler"] == "volcano"
    assert renders(path)[-2:] == ["PaddleJob", "ConfigMap"]  # the job, its run record


# Each wrong answer, the reason shown at once, and the question asked again.
WRONG_ANSWERS = [
    ("Job name", "Demo_Job", "'Demo_Job' is not a DNS-1035 label", "demo-job"),
    ("Container image", "r/demo", "image 'r/demo' is not pinned to a tag", "r/demo:v1"),
    ("Container image", "r/demo:latest", "image 'r/demo:latest' is not pinned", "r/demo:v1"),
    ("Start command", "python3 'train.py", '"python3 \'train.py" is not shell words', ""),
    ("Parameter servers", "-1", "-1 is not in the range x>=0", "2"),
    ("Trainers", "0", "0 is less than the minimum of 1", "4"),
    ("Trainers", "10001", "10001 is greater than the maximum of 10000", "4"),
    ("GPUs per trainer", "65", "65 is greater than the maximum of 64", "1"),
    ("GPUs per parameter server", "x", "'x' is not a valid integer", "0"),
    ("Storage", "s3://bucket", "storage 's3://bucket' is not one of", "nfs://10.0.0.5/data"),
    ("Storage", "efs://fs-xyz.us-west-2/", "'fs-xyz' is not an EFS file system id", "none"),
    ("Storage", "pvc://Claim", "'Claim' is not a DNS-1123 subdomain", "pvc://claim"),
    ("Mount path", "data", "'data' is not an absolute path", "/data"),
]
QUESTIONS = [
    ("Workload", "paddlejob"),
    ("Job name", "demo"),
    ("Container image", "r/demo:v1"),
    ("Start command", ""),
    ("Parameter servers", "2"),
    ("Trainers", "4"),
    ("GPUs per trainer", "1"),
    ("GPUs per parameter server", "0"),
    ("Gang-schedule with Volcano", "n"),
    ("Storage", "nfs://10.0.0.5/data"),
    ("Mount path", "/data"),
]


@pytest.mark.parametrize(("question", "wrong", "reason", "right"), WRONG_ANSWERS)
def test_init_asks_again_at_once_when_an_answer_is_wrong(
    runner, tmp_path, question, wrong, reason, right
):
    answers = []
    for asked, answer in QUESTIONS:
        answers += [wrong, right] if asked == question else [answer]
    result, path = prompted(runner, tmp_path, answers)
    assert result.exit_code == 0, result.output
    # The reason comes right after the wrong answer, then the same question again.
    lines = result.output.splitlines()
    (at,) = [n for n, line in enumerate(lines) if line.startswith(f"Error: {reason}")]
    assert lines[at - 1].startswith(question) and lines[at - 1].endswith(f": {wrong}")
    assert lines[at + 1].startswith(question) and lines[at + 1].endswith(f": {right}")
    assert result.output.count("Error:") == 1
    assert path.exists()


def test_init_asks_again_when_an_answer_breaks_an_earlier_one(runner, tmp_path):
    """A flag given stands: the answer that contradicts it is the one asked again."""
    name = "a" * 53  # fits `<name>-worker-0` and `<name>-worker-99`, not `<name>-worker-999`
    answers = ["job", "paddlejob", "r/demo:v1", "", "1000", "100", "0", "0", "n", "none"]
    result, path = prompted(runner, tmp_path, answers, "--ps", "2", "--name", name)
    assert result.exit_code == 0, result.output
    assert "Error: workload 'job' has no 'ps' role" in result.output
    assert f"Error: '{name}' is too long for workload 'paddlejob'" in result.output
    assert yaml.safe_load(path.read_text())["spec"]["worker"] == {"replicas": 100}


def test_init_asks_for_parameter_server_gpus_only_with_parameter_servers(runner, tmp_path):
    job = ["job", "", "r/demo:v1", "", "1", "n", "none"]
    result, path = prompted(runner, tmp_path, job)
    assert result.exit_code == 0, result.output
    assert "GPUs per trainer [0]: " in result.output
    assert "Parameter servers" not in result.output and "parameter server" not in result.output
    assert yaml.safe_load(path.read_text())["spec"]["worker"] == {"replicas": 1, "gpus": 1}
    no_ps = ["paddlejob", "", "r/demo:v1", "", "0", "2", "1", "n", "none"]
    result, _ = prompted(runner, tmp_path, no_ps, "--force")
    assert result.exit_code == 0, result.output
    assert "GPUs per parameter server" not in result.output


def test_init_asks_distributed_job_for_storage_without_offering_none(runner, tmp_path):
    answers = ["distributed-job", "", "r/demo:v1", "", "2", "0", "n", "", "none"]
    result, path = prompted(runner, tmp_path, [*answers, "hostpath:///mnt/mfs", "/mnt/mfs"])
    assert result.exit_code == 0, result.output
    assert "Storage (nfs://SERVER/PATH," in result.output  # no default to accept
    assert "Error: workload 'distributed-job' needs storage" in result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert spec["volumes"][0]["hostPath"] == {"path": "/mnt/mfs"}


def test_init_collective_job_runs_the_launcher_on_a_script_with_a_deadline(runner, tmp_path):
    base = ["--no-input", "--workload", "collective-job", "--image", "r/x:v1", "--workers", "4"]
    result, path = init(runner, tmp_path, *base)
    assert result.exit_code == 0, result.output
    text = path.read_text()
    spec = yaml.safe_load(text)["spec"]
    assert "command" not in spec and spec["args"] == ["train.py"]
    assert spec["worker"] == {"replicas": 4}
    assert spec["run"] == {"activeDeadlineSeconds": 86400}
    assert "args: [train.py]  # the training script and its flags: the launcher runs it" in text
    assert renders(path) == ["Service", "Job", "ConfigMap"]
    command = ["--command", "python3 -m paddle.distributed.launch --log_dir /logs t.py"]
    result, path = init(runner, tmp_path, *base, *command, "--force")
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert "args" not in spec and spec["command"][-1] == "t.py"
    assert "# after paddlegen's rank-0 master wrapper; Paddle's launcher when left out" in (
        path.read_text()
    )


def test_init_asks_collective_job_for_a_command_defaulting_to_the_launcher(runner, tmp_path):
    answers = ["collective-job", "", "r/demo:v1", "", "2", "0", "n", "none"]
    result, path = prompted(runner, tmp_path, answers)
    assert result.exit_code == 0, result.output
    assert "Start command (empty: Paddle's launcher on train.py): " in result.output
    assert "Parameter servers" not in result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert (spec["args"], spec["worker"]) == (["train.py"], {"replicas": 2})


def test_init_preset_writes_an_llm_trainers_spec_that_renders_its_wrapper(runner, tmp_path):
    base = ["--no-input", "--image", "r/sft:v1", "--workers", "2", "--preset", "paddleformers"]
    result, path = init(runner, tmp_path, *base, "--storage", "pvc://llm")
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert spec["command"] == ["paddleformers-cli", "train", "/mnt/data/train.yaml"]
    doc, warnings = load.load_valid(path)
    assert warnings == []
    (job,) = [m.obj for m in build.render_document(doc).manifests if m.kind == "Job"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert 'export NNODES="$PADDLE_NNODES"' in container["command"][2]
    result, _ = init(runner, tmp_path, *base, "--workload", "job", "--force")
    assert result.exit_code == 2
    assert "Invalid value for '--workload': preset 'paddleformers' runs" in result.output


def test_init_asks_a_preset_for_its_command_defaulting_to_the_trainers(runner, tmp_path):
    answers = ["collective-job", "", "r/demo:v1", "", "2", "0", "n", "none"]
    result, path = prompted(runner, tmp_path, answers, "--preset", "erniekit")
    assert result.exit_code == 0, result.output
    assert "Start command (empty: erniekit train CONFIG): " in result.output
    command = yaml.safe_load(path.read_text())["spec"]["command"]
    assert command == ["erniekit", "train", "train.yaml"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--name", "Demo_Job"], "'--name': 'Demo_Job' is not a DNS-1035 label"),
        (["--name", "a" * 62], "'--name': '" + "a" * 62 + "' is too long for workload"),
        (["--namespace", "Team"], "'--namespace': 'Team' is not a DNS-1123 label"),
        (["--image", "r/x"], "'--image': image 'r/x' is not pinned to a tag"),
        (["--image", ""], "'--image': '' should be non-empty"),
        (["--cpu", "two"], "'--cpu': 'two' is not a Kubernetes quantity"),
        (["--memory", "4GB"], "'--memory': '4GB' is not a Kubernetes quantity"),
        (["--storage", "nfs://n/x", "--capacity", "1 Gi"], "'--capacity': '1 Gi' is not a"),
        (["--storage", "nfs://n/x", "--mount-path", "x"], "'--mount-path': 'x' is not an abs"),
        (["--storage", "s3://bucket"], "'--storage': storage 's3://bucket' is not one of"),
        (["--workers", "0"], "'--workers': 0 is less than the minimum of 1"),
        (["--workers", "10001"], "'--workers': 10001 is greater than the maximum of 10000"),
        (["--gpus", "65"], "'--gpus': 65 is greater than the maximum of 64"),
        (["--ps-gpus", "1"], "'--ps-gpus': 1 GPUs per parameter server, but there are none"),
        (["--accelerator", "kunlunxin.com/xpu"], "'--accelerator': kunlunxin.com/xpu for pods"),
        (["--command", "python3 'x"], "'--command': \"python3 'x\" is not shell words"),
        (["--workload", "job", "--ps", "1"], "'--ps': workload 'job' has no 'ps' role"),
        (["--workload", "job", "--workers", "2"], "'--workers': workload 'job' runs exactly"),
    ],
)
def test_init_without_input_refuses_a_bad_flag_by_name_before_writing(runner, tmp_path, args, flag):
    result, path = init(runner, tmp_path, "--no-input", "--image", "r/x:v1", *args)
    assert result.exit_code == 2, result.output
    assert f"Error: Invalid value for {flag}" in result.stderr
    assert "Traceback" not in result.output
    assert not path.exists()


def test_init_refuses_every_bad_flag_at_once_even_when_it_would_ask(runner, tmp_path):
    result, path = init(
        runner, tmp_path, "--name", "Demo", "--memory", "4GB", "--workers", "0", stdin="\n"
    )
    assert result.exit_code == 2
    assert result.output.count("Invalid value for") == 3  # before any question
    assert "Workload" not in result.output
    assert not path.exists()
    result, path = init(runner, tmp_path, "--no-input", "--image", "r/x:v1", name="My_Job.yaml")
    assert result.exit_code == 2
    assert "Invalid value for '--name' (default 'My_Job'): 'My_Job' is not" in result.stderr


def gang_min_resources(path) -> dict:
    """minResources of the scheduling policy the operator builds its PodGroup from."""
    doc, _ = load.load_valid(path)
    (job,) = [m.obj for m in build.render_document(doc).manifests if m.kind == "PaddleJob"]
    policy = job["spec"].get("schedulingPolicy") or job["spec"]["runPolicy"]["schedulingPolicy"]
    return policy["minResources"]


@pytest.mark.parametrize(
    ("workload", "ps_gpus", "gpus", "cpu", "memory"),
    [("paddlejob", [], "4", "14", "60Gi"), ("paddlejob", ["--ps-gpus", "1"], "6", "18", "72Gi"),
     ("kubeflow-paddlejob", [], "4", "14", "60Gi"),
     ("kubeflow-paddlejob", ["--ps-gpus", "2"], "8", "24", "96Gi")],
)  # fmt: skip
def test_init_gives_gpus_to_trainers_and_to_parameter_servers_only_when_asked(
    runner, tmp_path, workload, ps_gpus, gpus, cpu, memory
):
    """Per GPU of a pod 3 CPUs and 12Gi; a parameter server without GPUs 1 CPU and 2Gi."""
    args = ["--workload", workload, "--image", "r/x:v1", "--ps", "2", "--workers", "4"]
    result, path = init(runner, tmp_path, "--no-input", *args, "--gpus", "1", "--volcano", *ps_gpus)
    assert result.exit_code == 0, result.output
    assert gang_min_resources(path) == {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpus}


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


def test_init_without_input_needs_an_image(runner, tmp_path):
    result, path = init(runner, tmp_path, "--no-input")
    assert result.exit_code == 2
    assert "Error: --image is required with --no-input" in result.stderr
    assert not path.exists()


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


@pytest.mark.parametrize(
    ("rule", "first"),
    [
        ("image-tag", "image-tag (warning)"),
        ("volume-source", "volume-source (error, required)"),
        ("kueue-workload", "kueue-workload (error, info)"),
        ("server", "server (error, warning)"),  # a rule of no spec
    ],
)
def test_explain_a_rule_says_what_it_checks_and_why(runner, rule, first):
    from paddlegen.report import declared_rules

    declared = next(r for r in declared_rules() if r.id == rule)
    result = runner.invoke(cli, ["explain", rule])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:2] == [first, f"  {declared.summary}"]
    assert " ".join(line.strip() for line in lines[3:]) == declared.explanation


def test_explain_an_unknown_field_is_exit_2(runner):
    result = runner.invoke(cli, ["explain", "spec.wokrer"])
    assert result.exit_code == 2
    assert "did you mean 'worker'" in result.stderr


JOB = LOSSY_JOB


def test_import_from_stdin_prints_the_spec_and_lists_what_it_left(runner):
    result = runner.invoke(cli, ["import", "-"], input=JOB)
    assert result.exit_code == 1, result.output  # lossy: hostNetwork is not carried over
    spec = yaml.safe_load(result.stdout)  # written all the same, for the user to edit
    assert spec["spec"]["workload"] == "job"
    assert spec["spec"]["command"] == ["python3", "train.py"]
    lines = result.stderr.splitlines()
    # a field not carried over is named where the input holds it, line and column
    assert JOB.splitlines()[8].index("hostNetwork") == 6
    assert (
        "<stdin>:9:7: warning: Job/demo: spec.template.spec.hostNetwork = true: not carried over "
        "[import-lossy]" in lines
    )
    assert (
        "<stdin>:7:21: info: Job/demo: container 'main' is named 'paddle' (operators find it by "
        "name) [import-note]" in lines  # at the container's name
    )
    assert lines[-1] == (
        "paddlegen: 1 lossy note: the spec would not run as the input does; edit it, or "
        "accept it with --lossy"
    )


def test_import_with_lossy_accepts_a_spec_that_runs_differently(runner):
    result = runner.invoke(cli, ["import", "-", "--lossy"], input=JOB)
    assert result.exit_code == 0, result.output
    assert "hostNetwork = true: not carried over [import-lossy]" in result.stderr  # still said
    assert "--lossy" not in result.stderr


def test_import_of_what_maps_whole_exits_0_with_its_notes_as_information(runner, tmp_path):
    source = tmp_path / "job.yaml"
    source.write_text(JOB.replace("      hostNetwork: true\n", ""))
    out = tmp_path / "jobs" / "demo.yaml"
    result = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{source}:7:21: info: Job/demo: container 'main' is named 'paddle'" in result.stderr
    assert "warning: Job" not in result.stderr
    assert renders(out) == ["Job", "ConfigMap"]


def test_import_lists_a_jobs_notes_in_the_order_of_the_input(runner):
    # The TrainJob importer notes the runtime, the trainer, Kueue's patch and the pod template
    # in an order of its own; a reader goes down the file.
    source = str(DATA / "import" / "torch-trainjob.yaml")
    result = runner.invoke(cli, ["import", source, "--lossy"])
    assert result.exit_code == 0, result.output
    notes = [line.split(": ", 1)[0] for line in result.stderr.splitlines()]
    notes = [where for where in notes if where.startswith(source)]
    placed = [tuple(map(int, where.split(":")[1:])) for where in notes]  # every one placed
    assert len(placed) >= 6 and placed == sorted(placed)


def test_import_writes_a_lossy_spec_that_renders(runner, tmp_path):
    source = tmp_path / "job.yaml"
    source.write_text(JOB)
    out = tmp_path / "jobs" / "demo.yaml"
    result = runner.invoke(cli, ["import", str(source), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert renders(out) == ["Job", "ConfigMap"]


@pytest.mark.parametrize("lossy", [[], ["--lossy"]])
def test_import_notes_are_json_findings(runner, lossy):
    result = runner.invoke(cli, ["import", "-", "--format", "json", *lossy], input=JOB)
    assert result.exit_code == (0 if lossy else 1)
    found = json.loads(result.stderr)  # nothing but the findings: the verdict is the exit code
    kinds = {(f["severity"], f["rule"]) for f in found if f["path"] == "Job/demo"}
    assert kinds == {("warning", "import-lossy"), ("info", "import-note")}
    hostnet = next(f for f in found if "hostNetwork" in f["message"])
    assert (hostnet["file"], hostnet["severity"]) == ("<stdin>", "warning")


def test_import_notes_as_github_annotations(runner):
    result = runner.invoke(cli, ["import", "-", "--format", "github"], input=JOB)
    assert result.exit_code == 1
    assert (
        "::warning file=<stdin>,line=9,col=7,title=paddlegen import-lossy::Job/demo: spec.template"
        in result.stderr
    )
    assert "::warning file=<stdin>,title=paddlegen import-lossy::Job/demo: spec.template" not in (
        result.stderr
    )
    assert (
        "::notice file=<stdin>,line=7,col=21,title=paddlegen import-note::Job/demo: container"
        in (result.stderr)
    )


def test_import_exits_1_when_the_spec_it_makes_is_invalid(runner):
    invalid = JOB.replace('image: "r/demo:v1", ', "")
    result = runner.invoke(cli, ["import", "-", "--lossy"], input=invalid)
    assert result.exit_code == 1  # --lossy accepts a spec that runs differently, not a broken one
    assert "image-required" in result.stderr
    assert yaml.safe_load(result.stdout)["metadata"]["name"] == "demo"  # written all the same


def test_import_without_a_training_object_is_exit_2(runner):
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
    result = runner.invoke(cli, ["import", "-"], input=pvc)
    assert result.exit_code == 2
    assert "no training object" in result.stderr and "PersistentVolumeClaim/data" in result.stderr


TWO_JOBS = (
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
    "      containers: [{name: paddle, image: r/a:v1}]\n      restartPolicy: Never\n---\n"
    "apiVersion: batch.paddlepaddle.org/v1\nkind: PaddleJob\nmetadata: {name: b}\nspec:\n"
    "  worker:\n    replicas: 2\n    template: {spec: {containers: [{name: paddle, "
    "image: r/b:v1}]}}\n"
)


def test_import_of_several_jobs_to_a_folder_writes_a_spec_per_job(runner, tmp_path):
    source = tmp_path / "all.yaml"
    source.write_text(TWO_JOBS)
    jobs = tmp_path / "jobs"
    result = runner.invoke(cli, ["import", str(source), "-o", f"{jobs}/"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert sorted(p.name for p in jobs.iterdir()) == ["a.yaml", "b.yaml"]
    assert f"paddlegen: wrote {jobs}/a.yaml\npaddlegen: wrote {jobs}/b.yaml\n" in result.stderr
    specs = {p.stem: yaml.safe_load(p.read_text()) for p in jobs.iterdir()}
    assert (specs["a"]["spec"]["workload"], specs["b"]["spec"]["workload"]) == ("job", "paddlejob")
    rendered = runner.invoke(cli, ["render", str(jobs), "-o", str(tmp_path / "deploy")])
    assert rendered.exit_code == 0, rendered.output
    # an existing folder needs no slash, and one job goes there too
    again = runner.invoke(cli, ["import", str(source), "-o", str(jobs)])
    assert again.exit_code == 0 and "unchanged: " in again.stderr
    one = tmp_path / "one"
    one.mkdir()
    single = runner.invoke(cli, ["import", "-", "-o", str(one)], input=TWO_JOBS.split("---")[0])
    assert single.exit_code == 0, single.output
    assert [p.name for p in one.iterdir()] == ["a.yaml"]


@pytest.mark.parametrize("output", [None, "-", "spec.yaml"])
def test_import_of_several_jobs_into_one_spec_is_refused_naming_the_folder_form(
    runner, tmp_path, output
):
    source = tmp_path / "all.yaml"
    source.write_text(TWO_JOBS)
    args = ["-o", str(tmp_path / output) if output != "-" else "-"] if output else []
    result = runner.invoke(cli, ["import", str(source), *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (
        "paddlegen: error: the input holds 2 jobs (Job/a, PaddleJob/b), and a spec describes "
        "one: write a spec per job with -o DIR/ (DIR/<job>.yaml)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.yaml"]


def test_import_to_a_folder_writes_no_spec_when_one_exists_unless_forced(runner, tmp_path):
    source = tmp_path / "all.yaml"
    source.write_text(TWO_JOBS)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "b.yaml").write_text("mine\n")
    result = runner.invoke(cli, ["import", str(source), "-o", str(jobs)])
    assert result.exit_code == 2
    assert f"{jobs}/b.yaml: already exists; nothing written (use --force" in result.stderr
    assert [p.name for p in jobs.iterdir()] == ["b.yaml"]
    forced = runner.invoke(cli, ["import", str(source), "-o", str(jobs), "--force"])
    assert forced.exit_code == 0, forced.output
    assert "mine" not in (jobs / "b.yaml").read_text()


def test_import_of_two_jobs_of_one_name_to_a_folder_is_refused(runner, tmp_path):
    source = tmp_path / "all.yaml"
    source.write_text(
        TWO_JOBS.replace("{name: a}", "{name: a, namespace: x}").replace(
            "{name: b}", "{name: a, namespace: y}"
        )
    )
    result = runner.invoke(cli, ["import", str(source), "-o", f"{tmp_path}/jobs/"])
    assert result.exit_code == 2
    assert (
        "Job/a in namespace x and PaddleJob/a in namespace y would both be written to "
        f"{tmp_path}/jobs/a.yaml: paddlegen renders one folder per job name" in result.stderr
    )
    assert not (tmp_path / "jobs").exists()


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
    keywords = [i.keyword for i in parse_dockerfile(result.stdout)]
    assert keywords == ["FROM", "RUN", "RUN", "COPY", "WORKDIR", "ENTRYPOINT"]
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


@pytest.mark.parametrize(("workload", "roles"), [w for w in _WORKLOADS if w[0] != "paddlejob"])
def test_init_kueue_queues_the_training_object(runner, tmp_path, workload, roles):
    args = ["--workload", workload, "--image", "r/demo:v1", "--namespace", "team-a"]
    if workload == "distributed-job":
        args += ["--storage", "hostpath:///mnt"]  # its image reads from a shared volume
    result, path = init(runner, tmp_path, "--no-input", *args, "--kueue", "team-a", *roles)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(path.read_text())["spec"]["scheduling"] == {"kueue": {"queue": "team-a"}}
    rendered = runner.invoke(cli, ["render", str(path), "--stdout"])
    assert rendered.exit_code == 0, rendered.output
    (queued,) = [
        o
        for o in yaml.safe_load_all(rendered.stdout)
        if "kueue.x-k8s.io/queue-name" in o["metadata"]["labels"]
    ]
    assert queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert queued["kind"] != "ConfigMap"


def test_init_kueue_refuses_paddlejob_naming_the_flag(runner, tmp_path):
    args = ["--workload", "paddlejob", "--image", "r/demo:v1", "--kueue", "team-a"]
    result, path = init(runner, tmp_path, "--no-input", *args)
    assert result.exit_code == 2
    assert "Invalid value for '--kueue': Kueue cannot queue a PaddleFlow PaddleJob" in result.stderr
    assert "collective-job, trainjob or kubeflow-paddlejob" in result.stderr
    assert not path.exists()


def test_init_writes_collective_job_by_default_and_paddlejob_for_parameter_servers(
    runner, tmp_path
):
    result, path = init(runner, tmp_path, "--no-input", "--image", "r/x:v1")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(path.read_text())["spec"]["workload"] == "collective-job"
    result, path = init(runner, tmp_path, "--no-input", "--image", "r/x:v1", "--ps", "2", "--force")
    assert result.exit_code == 0, result.output
    spec = yaml.safe_load(path.read_text())["spec"]
    assert (spec["workload"], spec["ps"]["replicas"]) == ("paddlejob", 2)
    # asked, the question proposes it too
    answers = ["", "", "r/demo:v1", "", "0", "1", "0", "0", "n", "none"]
    result, path = prompted(runner, tmp_path, answers, "--ps", "1", "--force")
    assert result.exit_code == 0, result.output
    assert "Workload (job, distributed-job, paddlejob" in result.output
    assert "[paddlejob]: " in result.output
