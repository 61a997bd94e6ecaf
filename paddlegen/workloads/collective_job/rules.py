"""The rules of workload `collective-job`: the launcher's (shared), and its group restarts."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.rule import Context, Finding, WorkloadRules
from paddlegen.workloads.shared.rules import LAUNCHER_PORT, LAUNCHER_RULES


def _group_backoff(ctx: Context) -> Iterator[Finding]:
    """With group restarts the Indexed Job's backoffLimit is 0 whatever the spec says: a rank
    replaced alone would never rejoin the others, so every failure restarts the group
    (shared/jobset.py)."""
    run = ctx.spec.get("run", {})
    if ctx.restarts and "backoffLimit" in run:
        yield ctx.finding(
            ("spec", "run", "backoffLimit"),
            "with run.restarts no rank is retried alone (it could not rejoin the others): "
            "every failure restarts the whole group, so backoffLimit is ignored",
            "remove it; run.restarts bounds the attempts",
            key=True,
        )


RULES = WorkloadRules(
    rules=(*LAUNCHER_RULES, LAUNCHER_PORT),
    extends={"workload-setting": _group_backoff},
)
