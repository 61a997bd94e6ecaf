"""Workload `trainjob`'s importer of a TrainJob's own TrainingRuntime: the one paddlegen renders
for a job with group restarts (spec.run.restarts) or pod settings no runtime patch carries
(runtime.POD_SETTINGS; runtime.job_runtime), or a person's, read from the same input. Its
JobSet's failurePolicy.maxRestarts is spec.run.restarts, its Job's activeDeadlineSeconds
spec.run.activeDeadlineSeconds (each attempt's), its pods' settings are the spec's;
whatever it holds otherwise than paddlegen's is a note at its field (authoring/importer.py
lists what is left of it), and what paddlegen's has and it lacks is one note.

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
from paddlegen.workloads.trainjob.names import API_VERSION, NODE
from paddlegen.workloads.trainjob.runtime import NAMESPACED_KIND, POD_SETTINGS, own_runtime_spec

_MAX_RESTARTS = ("template", "spec", "failurePolicy", "maxRestarts")
# paddlegen's runtimes' own value of a pod setting (runtime.runtime): no token
_RUNTIME_POD = {"automountServiceAccountToken": False}


@dataclass(frozen=True)
class OwnRuntime:
    """What a TrainJob's own TrainingRuntime gives its spec."""

    restarts: int
    volcano: bool  # it gang-schedules with Volcano (its podGroupPolicy)
    pod: dict[str, Any]  # the spec's pod settings among runtime.POD_SETTINGS
    deadline: int | None  # each attempt's (runtime.attempt_deadline)


def own_runtime(obj: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    """The TrainingRuntime of the input that the TrainJob ``obj`` references, in its
    namespace, if it restarts the group (failurePolicy.maxRestarts of at least 1) or its pods
    have settings of the spec's (``_pod_settings``): without either, it is a runtime like any
    other (spec.trainjob.runtime names it)."""
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
            and (_restarts(o) >= 1 or _pod_settings(o))
        ),
        None,
    )


def _at(value: Any, *keys: str) -> Any:
    """What ``value`` holds at ``keys``, {} where a mapping on the way lacks one."""
    for key in keys:
        value = value.get(key, {}) if isinstance(value, dict) else {}
    return value


def _restarts(runtime: dict[str, Any]) -> int:
    value = _at(runtime, "spec", *_MAX_RESTARTS)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _node_job(runtime: dict[str, Any]) -> Any:
    """The Job spec of ``runtime``'s replicated job `node` ({} without one)."""
    jobs = _at(runtime, "spec", "template", "spec", "replicatedJobs")
    node = next((j for j in jobs if isinstance(j, dict) and j.get("name") == NODE), {})
    return _at(node, "template", "spec")


def _deadline(runtime: dict[str, Any]) -> int | None:
    """The activeDeadlineSeconds of each attempt's Job, with group restarts."""
    value = _at(_node_job(runtime), "activeDeadlineSeconds")
    ok = isinstance(value, int) and not isinstance(value, bool) and _restarts(runtime) >= 1
    return value if ok else None


def _pod_settings(runtime: dict[str, Any]) -> dict[str, Any]:
    """What the pods of ``runtime``'s replicated job `node` set of runtime.POD_SETTINGS
    otherwise than paddlegen's runtimes."""
    pod = _at(_node_job(runtime), "template", "spec")
    return {
        key: pod[key] for key in POD_SETTINGS if key in pod and pod[key] != _RUNTIME_POD.get(key)
    }


def read_own_runtime(runtime: dict[str, Any], ctx: Context, *, queued: bool) -> OwnRuntime:
    """The job's restarts, gang, pod settings and attempts' deadline from its own
    ``runtime``, taken with every field it holds as paddlegen's runtime for them does."""
    label = label_of(runtime)
    pod = _pod_settings(runtime)
    deadline = _deadline(runtime)
    body = runtime.setdefault("spec", {})
    restarts = _restarts(runtime)
    take(body, *_MAX_RESTARTS)
    volcano = isinstance(body.get("podGroupPolicy"), dict) and "volcano" in body["podGroupPolicy"]
    expected = own_runtime_spec(
        restarts, volcano=volcano, queued=queued, pod=pod, deadline=deadline
    )
    if restarts:
        expected["template"]["spec"]["failurePolicy"].pop("maxRestarts")
    lacking = take_same(body, expected, ("spec",))
    if lacking:
        said = ", ".join(f"{dotted(at)} = {json.dumps(value)}" for at, value in lacking)
        ctx.note(LOSSY, label, f"paddlegen's runtime sets what this one does not: {said}")
    expect_name(runtime, ctx.name, ctx)
    ctx.consumed.append((label, runtime))
    return OwnRuntime(restarts, volcano, pod, deadline)
