"""paddlegen.runtime: trainer identity from each workload's env, and the seed's reader helpers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paddlegen import runtime
from paddlegen.runtime import TrainerEnvError
from tests.seeds import code_blocks, seed_text


@pytest.mark.parametrize(
    ("env", "index", "count"),
    [
        ({"TRAINER_ID": "2", "TRAINERS": "3"}, 2, 3),  # paddlegen.sdk, job, kubeflow
        ({"PADDLE_TRAINER_ID": "1", "PADDLE_TRAINERS_NUM": "4"}, 1, 4),  # PaddleFlow operator
        ({"JOB_COMPLETION_INDEX": "5", "TRAINERS": "8"}, 5, 8),  # an Indexed batch Job
        ({"TRAINER_ID": "0", "CONF_PADDLE_GRADIENT_NUM": "3"}, 0, 3),  # distributed-job's count
        # The SDK's own names win; an empty TRAINER_ID (a ps pod of a PaddleJob) says nothing.
        (
            {
                "TRAINER_ID": "",
                "PADDLE_TRAINER_ID": "1",
                "TRAINERS": "2",
                "PADDLE_TRAINERS_NUM": "9",
            },
            1,
            2,
        ),
    ],
)
def test_identity_comes_from_whichever_env_the_workload_sets(env, index, count):
    assert runtime.trainer_id(env) == index
    assert runtime.trainers(env) == count


def test_identity_reads_the_process_environment_by_default(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    assert (runtime.trainer_id(), runtime.trainers()) == (3, 4)


def test_a_missing_identity_names_every_variable_it_tried():
    with pytest.raises(TrainerEnvError) as info:
        runtime.trainer_id({})
    assert all(name in info.value.message for name in runtime.TRAINER_ID_VARS)


@pytest.mark.parametrize("env", [{"TRAINERS": "three"}, {"TRAINERS": "0"}])
def test_a_bad_trainer_count_is_an_error(env):
    with pytest.raises(TrainerEnvError):
        runtime.trainers(env)


def _seed_functions() -> dict:
    """dist_reader and dataset_from_reader exactly as seed 002 prints them."""
    found: dict = {}
    for block in code_blocks(seed_text("002")):
        if block.lstrip().startswith("def "):
            exec(block, found)  # noqa: S102 - the seed's own example code
    assert {"dist_reader", "dataset_from_reader"} <= found.keys()
    return found


def _samples():
    return [(i, i * i, -i) for i in range(11)]


def test_dataset_from_reader_writes_what_the_seeds_version_writes(tmp_path):
    seed = _seed_functions()
    seed["dataset_from_reader"](str(tmp_path / "seed.csv"), _samples)
    runtime.dataset_from_reader(str(tmp_path / "ours.csv"), _samples)
    assert (tmp_path / "ours.csv").read_text() == (tmp_path / "seed.csv").read_text()


@pytest.mark.parametrize("trainers", [1, 2, 3, 4])
def test_dist_reader_shards_like_the_seed_and_covers_every_line_once(tmp_path, trainers):
    data = tmp_path / "data.csv"
    runtime.dataset_from_reader(str(data), _samples)
    seed = _seed_functions()
    shards = []
    for index in range(trainers):
        ours = list(runtime.dist_reader(str(data), trainers, index)())
        assert ours == list(seed["dist_reader"](str(data), trainers, index)())
        shards.append(ours)
    assert sorted(s for shard in shards for s in shard) == sorted(_samples())


def test_dist_reader_takes_the_count_and_index_from_the_env(tmp_path, monkeypatch):
    data = tmp_path / "data.csv"
    data.write_text("1,1\n2,2\n3,3\n4,4\n")
    monkeypatch.setenv("TRAINERS", "2")
    monkeypatch.setenv("TRAINER_ID", "0")
    assert list(runtime.dist_reader(str(data))()) == [(2, 2), (4, 4)]  # cnt 2 and 4: 2 % 2 == 0


def test_dist_reader_refuses_an_index_outside_the_job(tmp_path):
    with pytest.raises(TrainerEnvError, match="outside 0..1"):
        runtime.dist_reader(str(tmp_path / "x"), 2, 2)


def test_dist_reader_parses_with_the_given_function(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("0.5,a\n1.5,b\n")
    rows = list(runtime.dist_reader(str(data), 1, 0, parse=lambda s: tuple(s.strip().split(",")))())
    assert rows == [("0.5", "a"), ("1.5", "b")]


def test_the_runtime_needs_none_of_the_renderers_dependencies():
    """Training images install paddlegen with --no-deps to get these helpers."""
    heavy = ("yaml", "jinja2", "click", "jsonschema")
    code = f"import sys, paddlegen.runtime; print(sorted(set({heavy!r}) & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
