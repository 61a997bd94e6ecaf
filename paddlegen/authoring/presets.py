"""`paddlegen init --preset`: specs whose pods run an LLM trainer's own entry point, which
starts Paddle's launcher itself (paddlegen's master wrapper sets the env it reads:
collective_job.LLM_WRAPPER)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paddlegen.rules.devices import LAUNCHER_DEVICES


@dataclass(frozen=True)
class Preset:
    """An LLM entry point: its console script, whose `train CONFIG` trains."""

    cli: str
    title: str  # what --help and the spec's comment call it

    def command(self, config: str) -> str:
        """The start command, as shell words, for the training config at ``config``."""
        return f"{self.cli} train {config}"


PRESETS = {
    "paddleformers": Preset("paddleformers-cli", "PaddleFormers"),
    "erniekit": Preset("erniekit", "ERNIEKit"),
}
# An LLM pod's requests per GPU (docs/llm.md#pod-size). An SFT rank holds model weights in
# host memory as it loads and saves checkpoints, beside its data loaders' workers, so a
# preset's pod takes close to a GPU's share of the smallest common 8-GPU training node, AWS
# p3.16xlarge (8 V100, 64 vCPUs, 488 GiB), leaving room for the node's reserved share and its
# daemons (device plugin, exporters, CNI): an 8-GPU pod then fits every common 8-GPU training
# node (A100: GCP a2-highgpu-8g 96 vCPUs and 680 GB, Azure ND96asr_v4 96 and 900 GiB, AWS
# p4d.24xlarge 96 and 1152 GiB; H100: AWS p5.48xlarge 192 and 2048 GiB, GCP a3-highgpu-8g
# 208 and 1872 GB), and a 1-GPU pod GCP's a2-highgpu-1g (12 vCPUs, 85 GB).
LLM_CPU_PER_GPU, LLM_MEMORY_PER_GPU_GI = 7, 56
# The training config's file name, on the storage when there is one (the model, the data and
# the config live there), else in the image's working directory.
CONFIG = "train.yaml"

# Pods without GPUs (Paddle's CPU wheel): both CLIs hand the launcher `--gpus` the GPUs that
# GPUtil finds, none here, or CUDA_VISIBLE_DEVICES when set (paddleformers 1.2.0
# cli/cli.py:90-98, erniekit 1.3.0 cli.py:112-120), and the launcher refuses a `--gpus` without
# a value (argparse: "expected one argument"). With a device named, the launcher takes the pod
# for a GPU one and sets no backend (launch/controllers/collective.py:250-258 at Paddle 3.3.1),
# and Paddle's default, 'auto', makes no default process group on the CPU wheel
# (parallel.py:1072, :1128): the trainer's first group fails. PADDLE_DISTRI_BACKEND names gloo.
# Both were needed for paddleformers-cli to train on two CPU ranks.
CPU_ENV = [
    {"name": "CUDA_VISIBLE_DEVICES", "value": "0"},
    {"name": "PADDLE_DISTRI_BACKEND", "value": "gloo"},
]


# That device is a pin the rule launcher-devices refuses on a pod without GPUs: the spec says
# why it silences it there.
CPU_IGNORE = {
    "rule": LAUNCHER_DEVICES.id,
    "path": "$.spec.env[0].value",
    "reason": "the trainer's CLI hands Paddle's launcher `--gpus` of the visible devices; "
    "a CPU pod names one so that the flag has a value",
}


def preset_ignores(gpus: int) -> list[dict[str, str]]:
    """The findings a preset's spec silences: the CPU pods' device pin (CPU_ENV)."""
    return [] if gpus else [dict(CPU_IGNORE)]


def preset_sections(
    name: str, command: str | None, gpus: int, storage: str | None
) -> dict[str, Any]:
    """What preset ``name`` puts in the spec: its command (unless ``command`` is the user's),
    and without ``gpus`` the env its CLI needs on CPU pods. ``storage``: where the storage is
    mounted, if any (the config goes there)."""
    preset = PRESETS[name]
    sections: dict[str, Any] = {}
    if not command:
        config = f"{storage.rstrip('/')}/{CONFIG}" if storage else CONFIG
        sections["command"] = preset.command(config).split()
    if not gpus:
        sections["env"] = [dict(entry) for entry in CPU_ENV]
    return sections
