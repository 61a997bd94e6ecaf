"""Workload `job`'s importer: a batch Job that no other workload claims, as one pod."""

from __future__ import annotations

from typing import Any

from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import LOSSY, Context, take
from paddlegen.workloads.import_pod import pod
from paddlegen.workloads.import_spec import assemble, take_gang_size, take_run


def batch_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A batch/v1 Job as a single pod (a collective-job's or a distributed-job's Job is
    claimed by its own workload)."""
    body = obj.setdefault("spec", {})
    p = pod(body.setdefault("template", {}), ctx, where, at=("spec", "template"))
    _one_pod(body, ctx, where)
    spec = assemble("job", {"worker": (1, p)}, ctx, where)
    take_run(spec, body)
    take_gang_size(obj, spec, ctx)
    return spec


def _one_pod(body: dict[str, Any], ctx: Context, where: str) -> None:
    """Workload job runs one pod without a completion index: a Job that runs more pods, or
    indexes them, becomes one pod all the same, with a note saying so.

    It does not become another workload: collective-job starts Paddle's launcher with its
    contract (an Indexed Job without PADDLE_MASTER is no such job); paddlejob and
    kubeflow-paddlejob need their operator installed and give the pods their rank in other
    variables (PADDLE_TRAINER_ID, not JOB_COMPLETION_INDEX); distributed-job is the legacy
    pserver/trainer image's contract. Each would run the pods differently too, and without
    saying so."""
    shape = {
        k: take(body, k) for k in ("parallelism", "completions", "completionMode") if k in body
    }
    parallelism = shape.get("parallelism", 1)
    total = shape.get("completions") or parallelism
    indexed = shape.get("completionMode") == "Indexed"
    if total == parallelism == 1 and not indexed:
        return  # one pod, as the workload runs it (NonIndexed is the default mode)
    at_once = min(parallelism, total)
    runs = f"{total} pod{'s' if total != 1 else ''}" + (
        f", {at_once} at a time" if at_once != total else ""
    )
    given = ", ".join(f"{k} {v}" for k, v in shape.items())
    ctx.note(
        LOSSY,
        where,
        f"{given}: the Job runs {runs}"
        + (" with a completion index each (JOB_COMPLETION_INDEX)" if indexed else "")
        + "; workload job runs exactly one, without an index. For several trainers use "
        "workload collective-job (an Indexed Job that runs Paddle's launcher, each pod's rank "
        "its index), or paddlejob or kubeflow-paddlejob, whose operators give each pod its "
        "rank, with spec.worker.replicas",
    )
