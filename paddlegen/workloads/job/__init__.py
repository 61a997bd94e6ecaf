"""Workload `job`: one pod, one container, runs to completion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.workloads.base import (
    RUN_KEYS,
    Importer,
    Imports,
    Workload,
    batch_job_annotations,
    pod,
    run_fields,
    trainers_env,
)
from paddlegen.workloads.objects import BATCH_JOB

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules


def context(job: Job) -> dict[str, Any]:
    return {
        "run": run_fields(job),
        "job_annotations": batch_job_annotations(job),
        "pod": pod(job, job.roles["worker"], restart_policy=job.run.restart_policy),
    }


def imports() -> Imports:
    """The batch Job read back as one pod, when no other workload claims it."""
    from paddlegen.workloads.job import importer

    return Imports((Importer(BATCH_JOB, importer.batch_job),))


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.job.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="job",
    summary="one `batch/v1` Job, one pod",
    title="Job",
    objects=(BATCH_JOB,),
    roles={"worker": "worker"},
    derived_names=lambda name, spec: [name],  # the Job's pods carry it as the job-name label
    context=context,
    imports=imports,
    rules=own_rules,
    run_keys=RUN_KEYS,
    pod_template="Job spec.template",
    run_policy="Job spec",
    explain={"spec.run.restartPolicy": ["{tmpl}.spec.restartPolicy"]},
    single_pod=True,
    trainer_identity=lambda count: (trainers_env(count, {"value": "0"}), ""),
)
