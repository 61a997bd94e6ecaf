"""`paddlegen init`'s library side: answers judged by the spec schema and checks, the spec text."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from paddlegen.authoring.init import InitOptions, answer_problems, init_spec
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec
from paddlegen.workloads import DEFAULT_WORKLOAD

GOOD = {"name": "demo", "image": "r/demo:v1", "workload": "paddlejob"}


def written(options: InitOptions) -> dict:
    """The spec section init writes for ``options``."""
    return yaml.safe_load(init_spec(options))["spec"]


def test_the_default_workload_is_collective_job_and_parameter_servers_need_paddlejob():
    assert InitOptions().workload == DEFAULT_WORKLOAD == "collective-job"
    spec = written(InitOptions(name="demo", image="r/demo:v1"))
    assert (spec["workload"], spec["args"]) == ("collective-job", ["train.py"])
    assert answer_problems({"name": "demo", "image": "r/demo:v1", "ps": 1}) == {
        "ps": "workload 'collective-job' has no 'ps' role: every pod is a trainer of the "
        "collective (data-parallel) job (set worker.replicas to the number of pods, or use "
        "workload 'paddlejob' for parameter servers)"
    }


def test_good_answers_have_no_problems():
    assert answer_problems(GOOD) == {}


def test_every_wrong_answer_is_named_even_when_the_schema_hides_the_checks():
    """A schema error stops the checks; the answers at fault stand aside and are judged again."""
    answers = {**GOOD, "memory": "4GB", "image": "r/demo", "workers": 0, "storage": "s3://b"}
    problems = answer_problems(answers)
    assert set(problems) == {"memory", "image", "workers", "storage"}
    assert problems["image"].startswith("image 'r/demo' is not pinned to a tag")  # a check


def test_answers_still_to_come_are_not_judged():
    answers = {"workload": "distributed-job", "name": None, "image": None}
    assert answer_problems(answers, pending={"name", "image", "storage"}) == {}
    problems = answer_problems(answers, pending={"name", "image"})
    assert problems == {
        "storage": "workload 'distributed-job' needs storage: its image reads the trainer "
        "config and the data from a shared volume (JOB_PATH)"
    }


def test_an_answer_that_breaks_an_earlier_one_is_found_on_the_earlier_one():
    name = "a" * 53
    assert answer_problems({**GOOD, "name": name, "workers": 100}) == {}
    problems = answer_problems({**GOOD, "name": name, "workers": 1000})
    assert list(problems) == ["name"]
    assert "the derived name '" + name + "-worker-999' has 64 characters" in problems["name"]


def test_gpus_go_to_the_trainers_and_to_parameter_servers_only_when_asked():
    spec = written(InitOptions(**GOOD, ps=2, workers=4, gpus=1))
    assert "gpus" not in spec
    # 2Gi and the job's 4Gi /dev/shm, whose pages count against the limit
    cpu_pod = {"requests": {"cpu": "1", "memory": "6Gi"}, "limits": {"memory": "6Gi"}}
    assert (spec["ps"], spec["worker"]) == (
        {"replicas": 2, "resources": cpu_pod},  # not the trainers' GPU-sized requests
        {"replicas": 4, "gpus": 1},
    )
    spec = written(InitOptions(**GOOD, ps=2, ps_gpus=1))
    assert spec["ps"] == {
        "replicas": 2,
        "gpus": 1,
        "resources": {"requests": {"cpu": "3", "memory": "12Gi"}, "limits": {"memory": "12Gi"}},
    }
    assert answer_problems({**GOOD, "ps_gpus": 1}) == {
        "ps_gpus": "1 GPUs per parameter server, but there are none (ps 0)"
    }


@pytest.mark.parametrize(
    ("gpus", "cpu", "memory", "shm"),
    [(0, "1", "2Gi", None), (1, "3", "12Gi", "4Gi"), (8, "24", "96Gi", "32Gi"),
     (16, "48", "192Gi", "64Gi")],
)  # fmt: skip
def test_gpu_pods_get_requests_and_shm_by_their_gpus(gpus, cpu, memory, shm):
    spec = written(InitOptions(**GOOD, gpus=gpus))
    assert spec["resources"] == {
        "requests": {"cpu": cpu, "memory": memory},
        "limits": {"memory": memory},
    }
    assert spec.get("shm") == shm


@pytest.mark.parametrize(("gpus", "cpu", "memory"), [(1, "7", "56Gi"), (8, "56", "448Gi")])
def test_an_llm_presets_pods_get_a_training_nodes_share_per_gpu(gpus, cpu, memory):
    """An SFT rank's host memory holds its share of the model as it loads and saves: a
    preset's pods take 7 CPUs and 56Gi a GPU (docs/llm.md "Pod size"), other pods 3 and 12Gi."""
    llm = {**GOOD, "workload": "collective-job", "gpus": gpus, "preset": "erniekit"}
    spec = written(InitOptions(**llm))
    assert spec["resources"]["requests"] == {"cpu": cpu, "memory": memory}
    assert spec["resources"]["limits"] == {"memory": memory}
    assert spec["shm"] == f"{4 * gpus}Gi"  # /dev/shm as any GPU pod's, within the limit
    given = InitOptions(**llm, cpu="7", memory="40Gi")
    assert written(given)["resources"]["requests"] == {"cpu": "7", "memory": "40Gi"}


def test_an_accelerator_is_written_for_the_devices_the_pods_count():
    options = InitOptions(**GOOD, ps=1, gpus=8, ps_gpus=1, accelerator="huawei.com/Ascend910")
    text = init_spec(options)
    spec = yaml.safe_load(text)["spec"]
    assert spec["accelerator"] == "huawei.com/Ascend910"
    assert "gpus: 8  # per trainer pod -> limits huawei.com/Ascend910" in text
    rendered = build.render_document(parse_spec(text, "spec.yaml"))
    manifests = "".join(m.text() for m in rendered.manifests)
    assert "huawei.com/Ascend910: '8'" in manifests and "huawei.com/Ascend910: '1'" in manifests
    assert "nvidia.com/gpu" not in manifests
    assert "accelerator" not in written(InitOptions(**GOOD, gpus=1))
    assert answer_problems({**GOOD, "accelerator": "kunlunxin.com/xpu"}) == {
        "accelerator": "kunlunxin.com/xpu for pods that count none (--gpus, --ps-gpus)"
    }


def test_the_users_cpu_and_memory_win_over_the_gpu_defaults():
    options = InitOptions(**GOOD, ps=1, ps_gpus=2, gpus=8, cpu="10", memory="64Gi")
    spec = written(options)
    assert spec["resources"] == {
        "requests": {"cpu": "10", "memory": "64Gi"},
        "limits": {"memory": "64Gi"},
    }
    assert "resources" not in spec["ps"]  # the same for every pod: the flags say so
    assert spec["shm"] == "32Gi"  # by the most GPUs of a pod
    spec = written(InitOptions(**GOOD, gpus=2, cpu="5"))
    assert spec["resources"]["requests"] == {"cpu": "5", "memory": "24Gi"}


def test_implausible_sizes_are_a_problem_of_their_answer():
    """init writes specs without findings: implausible-size's warnings too."""
    assert list(answer_problems({**GOOD, "workers": 1001})) == ["workers"]
    assert list(answer_problems({**GOOD, "ps": 2, "ps_gpus": 17})) == ["ps_gpus"]
    problems = answer_problems({**GOOD, "gpus": 32})
    assert list(problems) == ["gpus"]
    assert problems["gpus"].startswith("32 GPUs per pod: more than 16")


def test_characters_yaml_cannot_hold_raw_are_written_escaped():
    """NEL and U+2028 would break lines raw: written escaped, they read back as given."""
    command = "python3 \x85 \u2028 \u2029 镜像 \U0001f600"
    text = init_spec(InitOptions(name="demo", image="r/demo:v1", command=command))
    assert "\\u0085" in text and "\\u2028" in text and "镜像" in text
    assert yaml.safe_load(text)["spec"]["command"] == command.split(" ")


def test_characters_yaml_cannot_hold_at_all_are_a_problem_of_the_command():
    """DEL and the C1 controls: the API server refuses them (control-character)."""
    problems = answer_problems({**GOOD, "command": "python3 \x7f \x9b"})
    assert list(problems) == ["command"]
    assert problems["command"].startswith(
        "the value holds U+007F (the control character DEL), which the API server refuses"
    )


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
# Per answer: values that are right on their own (combinations may still clash), and wrong ones.
RIGHT = {
    "workload": ["job", "distributed-job", "paddlejob", "kubeflow-paddlejob", "collective-job"],
    "name": ["demo", "a" * 53, "x"],
    "image": ["r/demo:v1", "r@sha256:ab"],
    "namespace": [None, "team"],
    "command": [None, "", "python3 train.py", "sh -c 'a b'"],
    "ps": [0, 1, 3],
    "workers": [1, 2, 100, 1000],
    "gpus": [0, 1, 8],
    "ps_gpus": [0, 1],
    "accelerator": ["nvidia.com/gpu", "huawei.com/Ascend910", "kunlunxin.com/xpu"],
    "volcano": [False, True],
    "kueue": [None, "team-a"],  # paddlejob's is wrong (kueue-workload)
    "storage": [
        "none",
        "nfs://10.0.0.5/data",
        "efs://fs-2cbf7385.us-west-2/",  # the NFS form
        "efs://fs-2cbf7385/train",  # the CSI driver
        "cephfs://5e5b7ae6-2f4e-4c2a-9f0e-3b1d2c6a7f10/cephfs/",  # needs a namespace
        "pvc://existing",
        "hostpath:///mnt",
        "dynamic://",
        "dynamic://fast",
    ],
    "mount_path": ["/mnt/data", "/"],
    "capacity": ["10Gi", "1e5"],
    "cpu": ["1", "500m"],
    "memory": ["2Gi", "0"],
    "preset": [None, "paddleformers", "erniekit"],  # paddlejob's is wrong (no launcher)
}
WRONG = {
    "workload": [],  # a click.Choice: nothing else gets through
    "accelerator": [],  # likewise
    "name": ["Demo_Job", "a" * 64, ""],
    "image": ["r/demo", "r/d:latest", ""],
    "namespace": ["Team", ""],
    "command": ["python3 'x"],
    "ps": [-1],
    "workers": [-1, 0, 10_001],
    "gpus": [-1, 65],
    "ps_gpus": [-1, 65],
    "volcano": [],
    "kueue": ["Team_A", "", "q" * 64],
    "storage": [
        "efs://fs-x.us-west-2/",
        "efs://fs-x/",
        "cephfs://mon a:6789/",
        "cephfs://172.19.32.166:6789,172.19.32.167:6789/",  # the in-tree plugin's monitors
        "cephfs://ceph-a/",  # no file system
        "pvc://Bad",
        "s3://b",
    ],
    "mount_path": ["data", "/dev/shm"],
    "capacity": ["1 Gi", "-1"],
    "cpu": ["two", ""],
    "memory": ["4GB"],
    "preset": ["gpt"],
}


@st.composite
def answers(draw: st.DrawFn) -> dict:
    """Every answer, most of them right on their own, up to three wrong (or any text)."""
    wrong = draw(st.sets(st.sampled_from([f for f in WRONG if WRONG[f]]), max_size=3))
    return {
        field: draw(
            st.sampled_from(WRONG[field]) | _TEXT if field in wrong else st.sampled_from(ok)
        )
        for field, ok in RIGHT.items()
    }


@given(answers())
def test_answers_without_problems_make_a_spec_without_findings(answers):
    """What init accepts, `paddlegen validate` accepts without a warning; what it refuses is
    refused by field, so the CLI can name the flag or ask the question again."""
    problems = answer_problems(answers)
    assert set(problems) <= {f.name for f in dataclasses.fields(InitOptions)}
    assert all(problems.values())
    if not problems:
        text = init_spec(InitOptions(**answers))
        found = load.validate_document(parse_spec(text, "spec.yaml"))
        # an info finding says nothing is wrong (kubeflow-paddlejob's Kueue note, which the
        # spec's comment repeats)
        assert [d for d in found if d.severity != "info"] == []


def test_a_dynamic_volume_gets_the_access_mode_its_job_needs():
    """No ReadWriteMany for a dynamic claim of one pod, which most block and local
    StorageClasses cannot give (Pending): the default, ReadWriteOnce."""
    for workers, modes in ((1, ["ReadWriteOnce"]), (2, ["ReadWriteMany"])):
        options = InitOptions(**GOOD, workers=workers, storage="dynamic://fast")
        text = init_spec(options, "demo.yaml")
        (volume,) = yaml.safe_load(text)["spec"]["volumes"]
        assert "accessModes" not in volume
        (rendered,) = [build.render_document(parse_spec(text, "demo.yaml"))]
        (claim,) = [m.obj for m in rendered.manifests if m.obj["kind"] == "PersistentVolumeClaim"]
        assert claim["spec"]["accessModes"] == modes


@pytest.mark.parametrize(
    ("preset", "cli"), [("paddleformers", "paddleformers-cli"), ("erniekit", "erniekit")]
)
def test_a_preset_runs_its_trainers_cli_on_the_config_in_the_storage(preset, cli):
    options = InitOptions(name="sft", image="r/sft:v1", preset=preset, workers=2, gpus=8)
    spec = written(options)
    assert spec["workload"] == "collective-job" and "args" not in spec and "env" not in spec
    assert spec["command"] == [cli, "train", "train.yaml"]  # the image's working directory
    stored = dataclasses.replace(options, storage="pvc://llm", mount_path="/mnt/llm/")
    assert written(stored)["command"] == [cli, "train", "/mnt/llm/train.yaml"]
    own = dataclasses.replace(options, command=f"{cli} train /c/sft.yaml --x 1")
    assert written(own)["command"] == [cli, "train", "/c/sft.yaml", "--x", "1"]


def test_a_preset_without_gpus_gives_its_cli_what_it_needs_on_cpu():
    text = init_spec(InitOptions(name="sft", image="r/sft:v1", preset="paddleformers"))
    assert yaml.safe_load(text)["spec"]["env"] == [
        {"name": "CUDA_VISIBLE_DEVICES", "value": "0"},
        {"name": "PADDLE_DISTRI_BACKEND", "value": "gloo"},
    ]
    assert "env:  # paddleformers-cli on pods without GPUs (Paddle's CPU wheel)" in text


def test_a_preset_needs_a_workload_that_runs_the_launchers_contract():
    assert answer_problems({**GOOD, "workload": "trainjob", "preset": "erniekit"}) == {}
    assert answer_problems({**GOOD, "workload": "job", "preset": "erniekit"}) == {
        "workload": "preset 'erniekit' runs erniekit, which starts Paddle's launcher: a "
        "workload that gives it the launcher's contract (collective-job, trainjob)"
    }
    assert answer_problems({**GOOD, "workload": "trainjob", "preset": "gpt"}) == {
        "preset": "'gpt' is not one of: paddleformers, erniekit"
    }


def _asked(answers: dict) -> list[str]:
    """The questions init asks when every one is answered with what ``answers`` hold."""
    from paddlegen.authoring.init_questions import questions

    return [q.name for q in questions(answers)]


def test_the_workload_answered_decides_the_questions_that_follow():
    from paddlegen.workloads import PS_WORKLOAD, WORKLOADS

    defaults = dataclasses.asdict(InitOptions())
    single = next(name for name, w in WORKLOADS.items() if w.single_pod)
    first = ["workload", "name", "image", "command"]
    assert _asked({**defaults, "workload": single}) == [*first, "gpus", "volcano", "storage"]
    with_ps = {**defaults, "workload": PS_WORKLOAD, "ps": 2, "storage": "pvc://data"}
    assert _asked(with_ps) == [
        *first,
        *("ps", "workers", "gpus", "ps_gpus", "volcano", "storage", "mount_path"),
    ]
    assert "ps_gpus" not in _asked({**with_ps, "ps": 0})  # no parameter servers, none to ask of


def test_a_question_offers_the_answer_so_far_and_storage_a_workload_needs_has_none():
    from paddlegen.authoring.init_questions import questions
    from paddlegen.authoring.presets import PRESETS
    from paddlegen.workloads import WORKLOADS

    defaults = dataclasses.asdict(InitOptions())
    needs = next(name for name, w in WORKLOADS.items() if w.needs_storage)
    asked = {q.name: q for q in questions({**defaults, "workload": needs, "workers": 3})}
    assert asked["workers"].default == 3
    assert asked["storage"].default is None  # an answer is needed
    assert asked["storage"].text.startswith("Storage (nfs://")
    preset = next(iter(PRESETS))
    command = next(q for q in questions({**defaults, "preset": preset}) if q.name == "command")
    assert command.text == f"Start command (empty: {PRESETS[preset].cli} train CONFIG)"
