"""Reading Paddle's launcher back (paddlegen import): whether a batch Job's pods get its
contract, whether Kueue queues the job, and the command without paddlegen's master wrapper."""

from __future__ import annotations

from typing import Any

from paddlegen.spec.scheduling import KUEUE_QUEUE_LABEL
from paddlegen.workloads.import_notes import LOSSY, Context
from paddlegen.workloads.import_positions import FieldPath
from paddlegen.workloads.import_spec import env_of
from paddlegen.workloads.shared.launcher import LAUNCHER, unwrapped


def gets_launcher_contract(job: dict[str, Any]) -> bool:
    """An Indexed Job whose pods get Paddle's launcher contract (PADDLE_MASTER)."""
    indexed = job.get("spec", {}).get("completionMode") == "Indexed"
    return indexed and any(e.get("name") == "PADDLE_MASTER" for e in env_of(job))


def is_queued(obj: dict[str, Any]) -> bool:
    """Whether Kueue queues ``obj`` (its queue label, which becomes scheduling.kueue)."""
    return KUEUE_QUEUE_LABEL in (obj.get("metadata", {}).get("labels") or {})


def unwrap(role: dict[str, Any], ctx: Context, where: str, at: FieldPath = ()) -> None:
    """The spec's command without paddlegen's master wrapper (and none for the launcher,
    which the workload runs by default); ``at``: where the input holds the command."""
    command = role.get("command")
    if command is None:
        ctx.note(
            LOSSY,
            where,
            "no command: the image's entrypoint becomes Paddle's launcher, " + " ".join(LAUNCHER),
        )
        return
    bare = unwrapped(command)
    if bare is not None:
        command = bare
    else:
        ctx.note(
            LOSSY,
            where,
            "the command now runs after paddlegen's master wrapper (/bin/sh): on rank 0 "
            "PADDLE_MASTER becomes the pod's own IP, where the launcher starts its store",
            at,
        )
    if command == LAUNCHER or not command:
        role.pop("command")
    else:
        role["command"] = command
