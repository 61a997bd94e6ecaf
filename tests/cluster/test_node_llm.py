"""The LLM trainers' entry points on a real node (`hack/local-cluster --with node,paddle-llm`).

PaddleFormers for real: the spec `paddlegen init --preset paddleformers` writes (its command,
run after paddlegen's master wrapper, and the env the CLI needs on CPU pods) runs
`paddleformers-cli train` on two ranks of a collective-job, in the PaddleFormers image of the
lock (requirements/paddle-llm-image.txt). The CLI starts Paddle's launcher, the two ranks
rendezvous through the contract, and the trainer pretrains the tiny randomly initialised
causal LM of tests/cluster/training/tiny_lm (config and byte-level tokenizer only: no weights,
nothing downloaded) for a few steps, the loss falling and the ranks agreeing.

ERNIEKit through a stand-in: ERNIEKit 1.3.0 needs paddleformers 0.3.1, triton and gradio,
which the node's images do not carry. Its CLI hands Paddle's launcher NNODES and
MASTER_ADDR:MASTER_PORT (erniekit/cli.py:96-98, :187-190); the stand-in does the same with the
contract's PADDLE_* env removed, so the job trains only if the values the wrapper gives those
three names are right on every rank, rank 0's own IP included."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.authoring.init import InitOptions, init_spec
from paddlegen.workloads.shared.launcher import LLM_WRAPPER
from tests.cluster.conftest import Kube, local_cluster, with_extras
from tests.cluster.test_node_collective import INDEX, job_condition, pods
from tests.cluster.test_node_operators import (
    HANG_TIMEOUT,
    PROGRAM,
    get,
    overrun,
    render,
    trained_in,
    wait_until_done,
)
from tests.cluster.test_node_restarts import final_state, jobset, ranks
from tests.cluster.test_paddleflow import wait_for
from tests.cluster.training import assert_masters, assert_trained, program
from tests.conftest import ROOT

pytestmark = pytest.mark.node

TINY_LM = ROOT / "tests" / "cluster" / "training" / "tiny_lm"
# What PaddleFormers' trainer logs at each step, and once of the distributed setup.
STEP = re.compile(r" - loss: ([0-9.]+), .*?global_step: (\d+),")
WORLD = re.compile(r"world_size: (\d+), distributed training: (\w+)")
SAVE_STEPS, LAST_STEP = 20, 100  # a checkpoint every 20 steps, of 100
STAND_IN = """\
#!/bin/sh
# A stand-in for ERNIEKit 1.3.0's `erniekit train CONFIG` (erniekit/cli.py:96-98, :187-190):
# Paddle's launcher on the node count and master that ERNIEKit reads, without the contract's
# PADDLE_* env, which would override them.
shift  # train
exec env -u PADDLE_MASTER -u PADDLE_NNODES -u PADDLE_RANK python3 -m paddle.distributed.launch \\
  --master "$MASTER_ADDR:$MASTER_PORT" --nnodes "$NNODES" "$@"
"""


@pytest.fixture(scope="module")
def llm(node: Kube) -> Kube:
    """The node with the PaddleFormers image imported."""
    return with_extras(node, ["paddle-llm"])


def preset_spec(name: str, preset: str, image: str, command: str) -> dict[str, Any]:
    """The spec `paddlegen init --preset` writes for two CPU ranks, in a namespace of its name,
    with what a cluster without a registry needs: the imported image, never pulled."""
    options = InitOptions(
        name=name, namespace=name, image=image, preset=preset, command=command, workers=2
    )
    data = yaml.safe_load(init_spec(options))
    data["spec"].update(
        {
            "imagePullPolicy": "Never",
            "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "4Gi"}},
            "terminationGracePeriodSeconds": 5,
        }
    )
    return data


def start(
    kube: Kube, data: dict[str, Any], files: dict[str, str], at: str, mode: int = 0o644
) -> str:
    """Apply ``data`` with ``files`` in the ConfigMap `files` mounted read-only at ``at``
    (each file ``mode``), in a namespace of the job's name; that name."""
    from paddlegen.pipeline import build

    name = data["metadata"]["name"]
    kube.run("create", "namespace", name)
    sources = [f"--from-literal={key}={text}" for key, text in files.items()]
    kube.run("create", "configmap", "files", "-n", name, *sources)
    data["spec"].setdefault("volumes", []).append(
        {
            "name": "files",
            "mountPath": at,
            "readOnly": True,
            "configMap": {"name": "files", "defaultMode": mode},
        }
    )
    kube.apply(build.manifest_stream([render(data)]))
    return name


def run(
    kube: Kube, data: dict[str, Any], files: dict[str, str], at: str, mode: int = 0o644
) -> dict[str, str]:
    """Apply ``data`` with ``files`` (start), and wait until its Job completes: the pods'
    logs, by pod name."""
    name = start(kube, data, files, at, mode)
    state, took, output = wait_until_done(kube, name, lambda: job_condition(kube, name, name))
    assert state == "Complete", overrun(kube, name, state, took, output)
    (container,) = get(kube, name, "job", name)["spec"]["template"]["spec"]["containers"]
    assert container["command"][: len(LLM_WRAPPER)] == LLM_WRAPPER
    trained_in(took, f"{data['spec']['command'][0]}: 2 ranks trained")
    return output


def test_paddleformers_trains_a_tiny_causal_lm_on_two_ranks(llm: Kube) -> None:
    name = "llm-pf"
    image = local_cluster().images.PADDLE_LLM.reference
    data = preset_spec(name, "paddleformers", image, "paddleformers-cli train /llm/train.yaml")
    assert [e["name"] for e in data["spec"]["env"]] == [
        "CUDA_VISIBLE_DEVICES",
        "PADDLE_DISTRI_BACKEND",
    ]
    # nothing from a hub: the model and the tokenizer are the ConfigMap's files
    data["spec"]["env"].append({"name": "HF_HUB_OFFLINE", "value": "1"})
    files = {path.name: path.read_text(encoding="utf-8") for path in sorted(TINY_LM.iterdir())}
    output = run(llm, data, files, "/llm")
    ranks = {int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]): p
             for p in pods(llm, name, name)}  # fmt: skip
    assert_masters(output, ranks, f"{name}-0.{name}:6768")
    losses = {}
    for pod, log in output.items():
        assert WORLD.findall(log) == [("2", "True")], log
        steps = STEP.findall(log)
        assert [int(step) for _, step in steps] == list(range(1, 9)), log
        losses[pod] = [float(loss) for loss, _ in steps]
    first, second = losses.values()
    assert first == second, losses  # the ranks' losses are averaged: one value per step
    assert first[-1] < 0.8 * first[0], f"the loss did not fall: {first}"


def test_a_deleted_rank_stops_on_sigterm_and_the_group_resumes_from_the_checkpoint(
    llm: Kube, tmp_path: Path
) -> None:
    """The preset with `spec.checkpoint` and `run.restarts` (a JobSet): PaddleFormers saves
    every SAVE_STEPS steps in the `output_dir` paddlegen hands it; rank 1's pod is deleted
    once the first checkpoint is whole. The pod's SIGTERM reaches Paddle's launcher through
    the wrapper (it logs it, controllers/controller.py:165-176 at v3.3.1), which stops its
    trainer: the pod is gone long before its grace period ends. The group restarts and both
    ranks resume after the last whole checkpoint (PaddleFormers' workflow resumes from the
    last checkpoint-* of output_dir: cli/train/sft/workflow.py:236-241 at 1.2.0), not at
    step 1. FLAG_LLM_PDC, as docs/llm.md advises: a save the restart cut short is skipped
    (trainer/trainer_utils.py:468-474), not resumed from and failed on."""
    with_extras(llm, ["jobset"])
    name, image = "llm-resume", local_cluster().images.PADDLE_LLM.reference
    saving = f"save_strategy=steps save_steps={SAVE_STEPS} max_steps={LAST_STEP}"
    data = preset_spec(
        name, "paddleformers", image, f"paddleformers-cli train /llm/train.yaml {saving}"
    )
    del data["spec"]["terminationGracePeriodSeconds"]  # paddlegen's, for a checkpointed job
    data["spec"]["env"] += [
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "FLAG_LLM_PDC", "value": "true"},
    ]
    data["spec"]["volumes"] = [
        {"name": "checkpoints", "mountPath": "/checkpoints",
         "hostPath": {"path": str(tmp_path), "type": "DirectoryOrCreate"}}
    ]  # fmt: skip
    data["spec"]["checkpoint"] = {"volume": "checkpoints"}
    data["spec"]["run"] = {"restarts": 1}
    data.setdefault("ignore", []).append(
        {"rule": "checkpoint-volume", "reason": "a hostPath: one node here"}
    )
    files = {path.name: path.read_text(encoding="utf-8") for path in sorted(TINY_LM.iterdir())}
    start(llm, data, files, "/llm")

    def rank_one() -> dict[str, Any] | None:
        found = [p for p in ranks(llm, name) if p["metadata"]["annotations"][INDEX] == "1"]
        running = found and found[0]["status"].get("phase") == "Running"
        return found[0] if running else None

    pod = wait_for(f"{name}: rank 1 running", rank_one, timeout=HANG_TIMEOUT)
    victim, grace = pod["metadata"]["name"], pod["spec"]["terminationGracePeriodSeconds"]
    first = tmp_path / name / f"checkpoint-{SAVE_STEPS}" / ".checkpoint_done"
    with subprocess.Popen(
        [llm.kubectl, "logs", "-f", "--timestamps", "-n", name, victim, "-c", "paddle"],
        env=llm.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as follow:  # fmt: skip
        wait_for(f"{name}: {first.parent.name} whole", first.exists, timeout=HANG_TIMEOUT)
        deleted = time.monotonic()
        llm.run("delete", "pod", victim, "-n", name, "--wait=true", f"--timeout={grace + 30}s")
        gone = time.monotonic() - deleted
        said, _ = follow.communicate(timeout=30)
    trained_in(gone, "from a pod's deletion to its trainer's exit")
    assert "Terminating with signal 15" in said, said[-6000:]
    assert gone < grace / 2, f"{gone:.1f} s of a {grace} s grace period: {said[-6000:]}"

    state, took, output = wait_until_done(llm, name, lambda: final_state(llm, name))
    saved = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert state == "Completed", overrun(llm, name, state, took, {"saved": saved, **output})
    assert jobset(llm, name)["status"]["restarts"] == 1
    for pod_name, log in output.items():
        steps = [int(step) for _, step in STEP.findall(log)]
        resumed = steps[0] - 1  # after the last whole checkpoint when the group stopped
        assert resumed % SAVE_STEPS == 0 and SAVE_STEPS <= resumed < LAST_STEP, (pod_name, steps)
        assert steps == list(range(resumed + 1, LAST_STEP + 1)), f"{pod_name}: {log[-3000:]}"


def test_an_erniekit_stand_in_trains_on_the_env_erniekit_reads(node: Kube) -> None:
    name = "llm-ek"
    image = local_cluster().images.PADDLE.reference
    data = preset_spec(name, "erniekit", image, f"/program/erniekit train {PROGRAM}")
    files = {"erniekit": STAND_IN, "train.py": program("collective")}
    output = run(node, data, files, "/program", 0o755)
    assert_trained(output, 2)
