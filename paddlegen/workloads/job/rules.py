"""The rules of workload `job`: one pod."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.rule import Context, Finding, Rule, WorkloadRules
from paddlegen.workloads.job import WORKLOAD


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
        elif body.get("replicas", 1) > 1:
            yield ctx.finding(
                ("spec", role, "replicas"),
                f"workload 'job' runs exactly one pod, not {body['replicas']}",
                hint,
            )


JOB_REPLICAS = Rule(
    "job-replicas",
    "workload `job` runs one pod: no `ps` or `heter`, `worker.replicas` 1",
    severity="error",
    silenceable=True,
    check=_single_node_job,
)


RULES = WorkloadRules(WORKLOAD.name, rules=(JOB_REPLICAS,))
