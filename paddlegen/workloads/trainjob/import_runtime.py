"""Workload `trainjob`'s importer of a TrainJob's own TrainingRuntime: the one paddlegen renders
for a job with group restarts (spec.run.restarts, runtime.job_runtime), or a person's, read
from the same input. Its JobSet's failurePolicy.maxRestarts is spec.run.restarts; whatever it
holds otherwise than paddlegen's is a note at its field (authoring/importer.py lists what is
left of it), and what paddlegen's has and it lacks is one note.

Trainer's sources cited are github.com/kubeflow/trainer at v2.3.0."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from paddlegen.workloads.import_notes import (
    LOSSY,
    Context,
    dotted,
    expect_name,
    key_of,
    label_of,
    take,
    take_same,
)
from paddlegen.workloads.trainjob.names import API_VERSION
from paddlegen.workloads.trainjob.runtime import NAMESPACED_KIND, own_runtime_spec

_MAX_RESTARTS = ("template", "spec", "failurePolicy", "maxRestarts")


@dataclass(frozen=True)
class OwnRuntime:
    """What a TrainJob's own TrainingRuntime gives its spec."""

    restarts: int
    volcano: bool  # it gang-schedules with Volcano (its podGroupPolicy)


def own_runtime(obj: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    """The TrainingRuntime of the input that the TrainJob ``obj`` references, in its
    namespace, if it restarts the group (failurePolicy.maxRestarts of at least 1): without,
    it is a runtime like any other (spec.trainjob.runtime names it)."""
    ref = obj.get("spec", {}).get("runtimeRef", {})
    if ref.get("kind") != NAMESPACED_KIND:
        return None
    return next(
        (
            o
            for o in ctx.others
            if key_of(o) == (API_VERSION, NAMESPACED_KIND)
            and o["metadata"]["name"] == ref.get("name")
            and o["metadata"].get("namespace") == ctx.namespace
            and _restarts(o) >= 1
        ),
        None,
    )


def _restarts(runtime: dict[str, Any]) -> int:
    value: Any = runtime.get("spec", {})
    for key in _MAX_RESTARTS:
        value = value.get(key, {}) if isinstance(value, dict) else {}
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_own_runtime(runtime: dict[str, Any], ctx: Context, *, queued: bool) -> OwnRuntime:
    """The job's restarts and gang from its own ``runtime``, taken with every field it holds
    as paddlegen's runtime for them does."""
    label = label_of(runtime)
    body = runtime.setdefault("spec", {})
    restarts = _restarts(runtime)
    take(body, *_MAX_RESTARTS)
    volcano = isinstance(body.get("podGroupPolicy"), dict) and "volcano" in body["podGroupPolicy"]
    expected = own_runtime_spec(restarts, volcano=volcano, queued=queued)
    expected["template"]["spec"]["failurePolicy"].pop("maxRestarts")
    lacking = take_same(body, expected, ("spec",))
    if lacking:
        said = ", ".join(f"{dotted(at)} = {json.dumps(value)}" for at, value in lacking)
        ctx.note(LOSSY, label, f"paddlegen's runtime sets what this one does not: {said}")
    expect_name(runtime, ctx.name, ctx)
    ctx.consumed.append((label, runtime))
    return OwnRuntime(restarts, volcano)
