"""What the workload's object has no place for: settings, run fields and deprecated ones."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.rule import Context, Finding, SpecRule
from paddlegen.workloads import SETTINGS_OWNERS, WORKLOADS
from paddlegen.workloads.base import RUN_KEYS, Workload


def _ignored_settings(ctx: Context) -> Iterator[Finding]:
    """A settings section, or a run field, that the workload's object has no place for would
    vanish silently (the CRD would prune it)."""
    workload = WORKLOADS[ctx.workload]
    for section, owner in SETTINGS_OWNERS.items():
        if section in ctx.spec and owner != ctx.workload:
            yield ctx.finding(
                ("spec", section),
                f"spec.{section} only applies to workload '{owner}'; workload "
                f"'{ctx.workload}' ignores it",
                key=True,
            )
    for key in RUN_KEYS:
        if key in ctx.spec.get("run", {}) and key not in workload.run_keys:
            yield ctx.finding(
                ("spec", "run", key),
                f"the {workload.title} has no {key}; workload '{ctx.workload}' ignores it",
                _run_key_home(key, workload),
                key=True,
            )


def _run_key_home(key: str, workload: Workload) -> str:
    """The hint: a workload with the same kind of object that does carry ``key``."""
    for other in WORKLOADS.values():
        if other.kind_name == workload.kind_name and key in other.run_keys and other.run_policy:
            return f"workload '{other.name}' supports it ({other.run_policy.rsplit('.', 1)[-1]})"
    return ""


WORKLOAD_SETTING = SpecRule(
    "workload-setting",
    "a settings section or run field the workload ignores",
    explanation=(
        "A settings section of another workload, or a `run` field the workload's object has no "
        "place for, would vanish without a word (the CRD prunes it). The rule says so, and names a "
        "workload that carries the field when there is one."
    ),
    severity="warning",
    silenceable=True,
    check=_ignored_settings,
)


def _deprecated(ctx: Context) -> Iterator[Finding]:
    if "recreateOnChange" in ctx.spec.get("run", {}):
        yield ctx.finding(
            ("spec", "run", "recreateOnChange"),
            "run.recreateOnChange no longer does anything: under Argo CD every change to a "
            "job's objects deletes the last run and starts a new one (they are Sync hooks)",
            "remove it",
            key=True,
        )


DEPRECATED = SpecRule(
    "deprecated",
    "a field that no longer does anything (`run.recreateOnChange`)",
    explanation=(
        "A field that no longer does anything (`run.recreateOnChange`): under Argo CD every change "
        "to a job's objects starts a new run. Remove it so that the spec says what runs."
    ),
    severity="warning",
    silenceable=True,
    check=_deprecated,
)


def _unsupported(ctx: Context) -> Iterator[Finding]:
    """Spec settings the workload's object has no place for (``Workload.unsupported``)."""
    unsupported = WORKLOADS[ctx.workload].unsupported
    for base, body in [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]:
        for key, (severity, why) in unsupported.items():
            if key in body:
                yield ctx.finding(
                    (*base, key),
                    why,
                    "remove it"
                    if severity == "error"
                    else "remove it, or use a workload whose object has the field",
                    key=True,
                    severity=severity,
                )


WORKLOAD_UNSUPPORTED = SpecRule(
    "workload-unsupported",
    "no setting the workload's object has no place for: a `trainjob` (Trainer v2.3.0) "
    "carries no `priorityClassName`, `runtimeClassName`, `topologySpreadConstraints`, "
    "`initContainers`, `sidecars`, `envFrom`, `workingDir` (errors), `imagePullPolicy` "
    "(warning), nor, under Volcano, the gang's `priorityClassName` (error) or a "
    "`minAvailable` below its pods (warning), nor, on a runtime of the spec's "
    "(`trainjob.runtime`), `automountServiceAccountToken`, `dnsPolicy` or `dnsConfig`, which "
    "only a runtime of the job's own carries (errors)",
    explanation=(
        "Some workloads' objects have no place for some spec settings (a TrainJob carries no "
        "`priorityClassName`, for one). An error where running without the setting would differ "
        "from what the spec asks, a warning where it would only be ignored."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_unsupported,
)


def _restarts(ctx: Context) -> Iterator[Finding]:
    """Group restarts need an engine that stops and starts every rank together
    (``Workload.group_restarts``); without one the spec would promise what no object does."""
    workload = WORKLOADS[ctx.workload]
    if ctx.restarts and not workload.group_restarts:
        able = [f"'{w.name}' ({w.group_restarts})" for w in WORKLOADS.values() if w.group_restarts]
        yield ctx.finding(
            ("spec", "run", "restarts"),
            f"workload '{ctx.workload}' cannot restart its group of ranks: the {workload.title} "
            "would not start them again",
            f"use workload {' or '.join(able)}" if able else "remove it",
            key=True,
        )


GROUP_RESTARTS = SpecRule(
    "group-restarts",
    "`run.restarts` only on a workload that restarts its whole group of ranks",
    explanation=(
        "`run.restarts` restarts the whole group of ranks when one fails, which needs an object "
        "that stops and starts every rank together. On a workload without one the spec would "
        "promise what no object does."
    ),
    severity="error",
    silenceable=True,
    check=_restarts,
)
