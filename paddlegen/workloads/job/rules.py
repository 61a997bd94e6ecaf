"""The rules of workload `job`: one pod."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.model import replicas
from paddlegen.spec.rule import Context, Finding, SpecRule, WorkloadRules


def _single_node_job(ctx: Context) -> Iterator[Finding]:
    hint = "use workload 'distributed-job' or 'paddlejob' for several nodes"
    for role, body in ctx.roles():
        if role != "worker":
            yield ctx.finding(
                ("spec", role),
                f"workload 'job' has no '{role}' role",
                hint,
                key=True,
            )
        elif replicas(body) > 1:
            yield ctx.finding(
                ("spec", role, "replicas"),
                f"workload 'job' runs exactly one pod, not {body['replicas']}",
                hint,
            )


JOB_REPLICAS = SpecRule(
    "job-replicas",
    "workload `job` runs one pod: no `ps` or `heter`, `worker.replicas` 1",
    explanation=(
        "Workload `job` renders one batch Job that runs a single pod. A `ps` or `heter` role, or "
        "more than one worker replica, has no place in it: the extra pods would never exist, and "
        "the job would train as one process."
    ),
    severity="error",
    silenceable=True,
    check=_single_node_job,
)


RULES = WorkloadRules(rules=(JOB_REPLICAS,))
