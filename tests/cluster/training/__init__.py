"""Training programs the `node` tests run in real pods: each rank prints its losses and what
it learned (`rank R/W step S loss L`, `rank R/W parameters V,V,...`), so that a test sees the
loss fall and every rank agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# What Paddle's launcher says of the master it takes from the env.
MASTER = re.compile(r"overridden by env: PADDLE_MASTER value: (\S+)")
LOSS = re.compile(r"^rank (\d+)/(\d+) step (\d+) loss (\S+)$", re.M)
PARAMETERS = re.compile(r"^rank (\d+)/(\d+) parameters (\S+)$", re.M)


def program(name: str) -> str:
    """The text of the program ``name`` (a module of this folder), as a pod receives it."""
    return (Path(__file__).parent / f"{name}.py").read_text(encoding="utf-8")


# What the init container of with_init_container_and_sidecar writes, and the training
# container prints before it trains.
PREPARED = "prepared by the init container, once the sidecar was up"


def with_init_container_and_sidecar(spec: dict[str, Any], image: str) -> None:
    """Give ``spec`` (a spec's `spec` section, with a `command`) a native sidecar
    (heartbeat.py, which runs for ever) and an init container, which the pod starts after it
    (paddlegen starts the sidecars first): the init container fails unless the sidecar's
    startupProbe passed before it started, and leaves a mark in a shared emptyDir, which the
    training command prints (and stops on, if missing) before it runs. One run then shows the
    order, the probe, the mounts, and that a sidecar that never exits keeps no job from
    completing. Seconds: the probe checks every second."""
    spec.setdefault("volumes", []).append(
        {"name": "scratch", "mountPath": "/scratch", "emptyDir": {}}
    )
    # imported by `up`, no registry has the image
    common = {"image": image, "imagePullPolicy": "Never", "volumeMounts": [{"name": "scratch"}]}
    spec["sidecars"] = [
        {
            "name": "heartbeat",
            **common,
            "command": ["python3", "-c", program("heartbeat")],
            "resources": {
                "requests": {"cpu": "50m", "memory": "64Mi"},
                "limits": {"memory": "256Mi"},
            },
            "startupProbe": {
                "exec": {"command": ["test", "-f", "/scratch/sidecar-up"]},
                "periodSeconds": 1,
                "failureThreshold": 30,
            },
        }
    ]
    spec["initContainers"] = [
        {
            "name": "prepare",
            **common,
            "command": [
                "sh",
                "-c",
                f"test -f /scratch/sidecar-up && echo '{PREPARED}' > /scratch/prepared",
            ],
        }
    ]
    # sh runs the spec's command as given ("$@"), once the mark is there
    spec["command"] = ["sh", "-c", 'cat /scratch/prepared && exec "$@"', "sh", *spec["command"]]


def assert_trained(logs: dict[str, str], world: int, tolerance: float = 0.0) -> None:
    """In ``logs`` (pod or file -> text) every rank of ``world`` printed losses that fell a
    hundredfold and parameters that agree: equal, or within ``tolerance`` of each other
    (parameter servers in GEO mode: each worker keeps its own last steps)."""
    text = "\n".join(f"--- {where}\n{log}" for where, log in sorted(logs.items()))
    losses: dict[int, list[float]] = {}
    for rank, size, _, loss in LOSS.findall(text):
        assert int(size) == world, text
        losses.setdefault(int(rank), []).append(float(loss))
    assert sorted(losses) == list(range(world)), text
    for rank, values in losses.items():
        assert values[-1] < values[0] / 100, f"rank {rank} did not learn: {values}"
    learned = {int(rank): [float(v) for v in values.split(",")]
               for rank, _, values in PARAMETERS.findall(text)}  # fmt: skip
    assert sorted(learned) == list(range(world)), text
    for values in learned.values():
        gaps = [abs(a - b) for a, b in zip(values, learned[0], strict=True)]
        assert max(gaps) <= tolerance, f"the ranks disagree: {learned}"


def assert_masters(logs: dict[str, str], ranks: dict[int, dict[str, Any]], master: str) -> None:
    """Paddle's launcher in each of ``ranks`` (rank -> its pod, every rank of the job; their
    logs by pod name in ``logs``) reported the master it takes from the env: rank 0 its own IP
    (the wrapper's choice at run time), every other rank ``master``, rank 0's name and port."""
    ip = ranks[0]["status"]["podIP"]
    port = master.rsplit(":", 1)[1]
    said = {rank: MASTER.findall(logs[pod["metadata"]["name"]]) for rank, pod in ranks.items()}
    assert said == {rank: [f"{ip}:{port}" if rank == 0 else master] for rank in said}
    assert sorted(said) == list(range(len(ranks)))
