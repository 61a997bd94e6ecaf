"""The rules of workload `trainjob`: the launcher's, and what a TrainJob cannot carry."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.rule import Context, Finding, SpecRule, WorkloadRules, worker_replicas
from paddlegen.workloads.shared.launcher import QUEUED_STOP_EXIT_CODES
from paddlegen.workloads.shared.rules import LAUNCHER_RULES
from paddlegen.workloads.trainjob.runtime import POD_SETTINGS


def _runtime(ctx: Context) -> str | None:
    """``trainjob.runtime``: a runtime of the user's; None for paddlegen's own."""
    runtime: str | None = ctx.spec.get("trainjob", {}).get("runtime")
    return runtime


def _kueue_runtime(ctx: Context) -> Iterator[Finding]:
    """A queued TrainJob's runtime does not fail on the exit codes of the ranks Kueue's
    preemption stops."""
    runtime = _runtime(ctx)
    if ctx.kueue is not None and runtime is not None:
        yield ctx.finding(
            ("spec", "trainjob", "runtime"),
            f"Kueue preempts a TrainJob by suspending it, and its ranks then end with exit code "
            f"{', '.join(map(str, QUEUED_STOP_EXIT_CODES))}: unless the pod failure policy of "
            f"runtime {runtime} counts a failed rank rather than fails the Job, as paddlegen's "
            "queued runtimes do, a preempted TrainJob fails for good",
            "leave spec.trainjob.runtime out (paddlegen's queued runtime then), or give "
            f"runtime {runtime} that rule (`paddlegen runtime` prints it)",
        )


KUEUE_RUNTIME = SpecRule(
    "kueue-runtime",
    "a queued TrainJob runs on paddlegen's queued runtime, or on one whose pod failure policy "
    "also counts (not fails on) the exit codes of ranks that Kueue's preemption stops",
    explanation=(
        "Kueue preempts a TrainJob by suspending it, and its ranks then end with the exit codes of "
        "a stopped process. Unless the runtime's pod failure policy counts those rather than fails "
        "the job, as paddlegen's queued runtimes do, a preempted TrainJob fails for good."
    ),
    severity="warning",
    silenceable=True,
    check=_kueue_runtime,
)


def _trainjob_gang(ctx: Context) -> Iterator[Finding]:
    """workload-unsupported under Volcano. Trainer's Volcano plugin makes the PodGroup of every
    pod, with the priority class of the runtime's pod template (plugins/volcano/volcano.go:113-150
    at v2.3.0): a TrainJob carries neither a gang size nor a priority."""
    scheduling = ctx.spec.get("scheduling", {})
    if scheduling.get("scheduler") != "volcano":
        return
    if "priorityClassName" in scheduling:
        yield ctx.finding(
            ("spec", "scheduling", "priorityClassName"),
            "a TrainJob (Trainer v2.3.0) cannot give its gang a priority: Trainer's PodGroup "
            "takes the priority class of the runtime's pods",
            "remove it, or install a copy of paddlegen's Volcano runtime with a "
            "priorityClassName in its pod template and name it in trainjob.runtime",
            key=True,
        )
    if "minAvailable" in scheduling and scheduling["minAvailable"] < worker_replicas(ctx):
        yield ctx.finding(
            ("spec", "scheduling", "minAvailable"),
            f"Trainer's PodGroup waits for every one of the {worker_replicas(ctx)} pods, not "
            f"{scheduling['minAvailable']}: a TrainJob (Trainer v2.3.0) carries no gang size",
            "remove minAvailable: a rank that starts alone waits for the others anyway",
            key=True,
            severity="warning",
        )


def _runtime_pod_settings(ctx: Context) -> Iterator[Finding]:
    """workload-unsupported on a runtime of the user's (trainjob.runtime): the pod settings
    no runtime patch has (runtime.POD_SETTINGS) go into a TrainingRuntime of the job's own,
    which would replace that runtime, so the runtime's pod template must carry them."""
    runtime = _runtime(ctx)
    if runtime is None:
        return
    for base, body in [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]:
        for key in POD_SETTINGS:
            if key in body:
                yield ctx.finding(
                    (*base, key),
                    f"a TrainJob's runtime patch (Trainer v2.3.0) has no {key}: paddlegen gives "
                    f"it to the pods in a TrainingRuntime of the job's own, which cannot also "
                    f"be runtime {runtime}",
                    f"set {key} in the pod template of runtime {runtime} and remove it here, "
                    "or leave spec.trainjob.runtime out",
                    key=True,
                )


def _trainjob_unsupported(ctx: Context) -> Iterator[Finding]:
    yield from _trainjob_gang(ctx)
    yield from _runtime_pod_settings(ctx)


def _own_runtime(ctx: Context) -> Iterator[Finding]:
    """group-restarts for a TrainJob: the policy that restarts the group is its runtime's, so
    paddlegen gives a TrainJob with restarts a runtime of its own and cannot use another."""
    runtime = _runtime(ctx)
    if ctx.restarts and runtime is not None:
        yield ctx.finding(
            ("spec", "trainjob", "runtime"),
            f"with run.restarts the TrainJob runs on a TrainingRuntime of its own, whose JobSet "
            f"restarts the group; it cannot also run on runtime {runtime}",
            "leave spec.trainjob.runtime out, or run.restarts (and give runtime "
            f"{runtime} a JobSet failurePolicy yourself)",
        )


RULES = WorkloadRules(
    rules=(*LAUNCHER_RULES, KUEUE_RUNTIME),
    extends={"workload-unsupported": _trainjob_unsupported, "group-restarts": _own_runtime},
)
