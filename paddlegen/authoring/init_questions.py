"""The questions `paddlegen init` asks for what its flags left out, each decided by the answers
given before it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from paddlegen.authoring.presets import PRESETS
from paddlegen.workloads import WORKLOADS


@dataclass(frozen=True)
class Question:
    """One question: the answer it gives (an InitOptions field), what it says, and what it
    takes: text, a whole number (at least ``minimum``), one of ``choices``, or yes or no
    (``kind`` bool). ``default`` is what an empty answer gives; None: an answer is needed."""

    name: str
    text: str
    default: Any
    kind: type = str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    show_default: bool = True


def questions(answers: Mapping[str, Any]) -> Iterator[Question]:
    """Every question the workload of ``answers`` has, in order. Each is made when the one
    before it has been answered (into ``answers``): the workload decides which follow."""
    yield Question("workload", "Workload", answers["workload"], choices=tuple(WORKLOADS))
    yield Question("name", "Job name (a DNS-1035 label: a-z, 0-9 and '-')", answers["name"])
    yield Question("image", "Container image (with a tag)", answers["image"])
    workload = WORKLOADS[answers["workload"]]
    if answers["preset"]:
        empty = f"{PRESETS[answers['preset']].cli} train CONFIG"
    else:
        empty = "Paddle's launcher on train.py" if workload.launcher else "the image's"
    yield Question(
        "command",
        f"Start command (empty: {empty})",
        answers["command"] or "",
        show_default=False,
    )
    if "ps" in workload.roles:
        yield Question("ps", "Parameter servers (0 for none)", answers["ps"], int, minimum=0)
    if not workload.single_pod:
        yield Question("workers", "Trainers", answers["workers"], int)
    yield Question("gpus", "GPUs per trainer", answers["gpus"], int, minimum=0)
    if "ps" in workload.roles and answers["ps"]:
        yield Question("ps_gpus", "GPUs per parameter server", answers["ps_gpus"], int, minimum=0)
    yield Question("volcano", "Gang-schedule with Volcano", False, bool)
    needs_storage = bool(workload.needs_storage)
    yield Question(
        "storage",
        "Storage (" + ("" if needs_storage else "none, ") + "nfs://SERVER/PATH, "
        "efs://FS-ID/PATH (CSI driver), efs://FS-ID.REGION/PATH (NFS), "
        "cephfs://CLUSTER-ID/FS-NAME/PATH, pvc://CLAIM, hostpath:///PATH, dynamic://CLASS)",
        None if needs_storage else answers["storage"],
    )
    if answers["storage"] != "none":
        yield Question("mount_path", "Mount path", answers["mount_path"])
