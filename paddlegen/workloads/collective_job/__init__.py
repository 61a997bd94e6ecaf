"""Workload `collective-job`: Paddle's collective training on Kubernetes' own batch
primitives, no operator. An Indexed Job runs `worker.replicas` pods at once; the Job controller
names pod i's host `<job>-<i>`, and a headless Service named after the job, the pods'
subdomain, makes that `<job>-<i>.<job>` in the job's namespace. Every pod starts Paddle's
launcher (`python3 -m paddle.distributed.launch`) with the launcher's contract in its env.

Paddle's sources cited are python/paddle/distributed/launch/ at v3.3.1; Kubernetes' are
pkg/controller/job/ at v1.37.2 unless a path says otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import replicas, restarts
from paddlegen.workloads.base import (
    RUN_KEYS,
    TRAINING_CONTAINER,
    Importer,
    Imports,
    Workload,
    batch_job_annotations,
    pod,
    run_fields,
    trainers_env,
)
from paddlegen.workloads.collective_job.contract import CONTRACT_ENV, contract_env, service_name
from paddlegen.workloads.collective_job.settings import SECTION, CollectiveSettings
from paddlegen.workloads.objects import BATCH_JOB, JOBSET
from paddlegen.workloads.shared import jobset
from paddlegen.workloads.shared.launcher import (
    BOUNDED_RUN,
    COMMAND_COMMENT,
    NO_NODE_COUNT_EXIT,
    RANK_PATH,
    checkpoint_args,
    command,
    failure_policy,
    writable_scratch,
)

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules

_CONTAINER = "{tmpl}.spec.containers[paddle]"


def _env(name: str) -> str:
    return f"{_CONTAINER}.env[{name}].value"


def context(job: Job) -> dict[str, Any]:
    worker = job.roles["worker"]
    replicas = worker.replicas
    # With group restarts a JobSet runs the Indexed Job (shared/jobset.py): it names
    # the pods and makes their Service, and a counted failure of any rank fails the Job at
    # once (backoffLimit 0), so that the JobSet starts every rank again, never one alone.
    group = job.run.restarts > 0
    settings: CollectiveSettings = job.settings
    log_env, volumes = writable_scratch(job, worker)
    run = run_fields(job)
    if group:
        run = {"backoffLimit": 0, **run_fields(job, ("activeDeadlineSeconds",))}
    return {
        "shape": {
            "parallelism": replicas,
            "completions": replicas,
            "completionMode": "Indexed",
            "podFailurePolicy": failure_policy(
                TRAINING_CONTAINER, queued=job.scheduling.kueue is not None
            ),
        },
        "run": run,
        "job_annotations": batch_job_annotations(job),
        "service": None if group else service_name(job.name),
        "jobset": jobset.jobset_fields(job, NO_NODE_COUNT_EXIT) if group else None,
        "replicated_job": jobset.REPLICATED_JOB,
        "pod": pod(
            job,
            worker,
            # The pod failure policy takes no other (Kubernetes v1.37.2
            # pkg/apis/batch/validation/validation.go:308-310).
            restart_policy="Never",
            env=[*contract_env(job.name, replicas, settings.port, group), *log_env],
            volumes=volumes,
            ports=[{"name": "master", "containerPort": settings.port, "protocol": "TCP"}],
            command=command(worker),
            args=checkpoint_args(job, worker),
            subdomain=None if group else service_name(job.name),
            attempt=jobset.ATTEMPT_ENV_SOURCE if group else None,
        ),
    }


def derived_names(name: str, spec: dict[str, Any]) -> list[str]:
    """The last pod's hostname, `<job>-<replicas - 1>` (job_controller.go:1916); a JobSet's
    longest pod name, `<job>-worker-0-<replicas - 1>-xxxxx`, which its webhook checks; the
    Service is named after the job."""
    count = replicas(spec.get("worker", {}))
    if restarts(spec):
        return [jobset.longest_pod_name(name, count)]
    return [f"{name}-{count - 1}"]


def imports() -> Imports:
    """Its Indexed Job (the batch Job whose pods get the launcher's contract) or JobSet read
    back, its headless Service, and an operator's PaddleJob converted."""
    from paddlegen.workloads.collective_job import convert, import_jobset, importer
    from paddlegen.workloads.shared.import_launcher import gets_launcher_contract

    return Imports(
        (
            Importer(BATCH_JOB, importer.collective_job, claims=gets_launcher_contract),
            Importer(JOBSET, import_jobset.jobset_job),
        ),
        derived=importer.derived,
        convert=convert.from_operator,
    )


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.collective_job.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="collective-job",
    summary="an Indexed `batch/v1` Job and a headless Service running Paddle's collective launcher",
    needs="nothing beyond Kubernetes",
    title="Job",
    # the Indexed Job; with run.restarts, the JobSet that runs it (shared/jobset.py)
    objects=(BATCH_JOB, JOBSET),
    roles={"worker": "worker"},
    derived_names=derived_names,
    context=context,
    imports=imports,
    rules=own_rules,
    converts_from=("paddlejob", "kubeflow-paddlejob"),
    settings=SECTION,
    # no operator to install
    default=True,
    run_keys=RUN_KEYS,
    pod_template="Job spec.template",
    run_policy="Job spec",
    explain={
        "metadata.name": [
            "Job metadata.name",
            "Service metadata.name",
            "{tmpl}.spec.subdomain",
            _env("PADDLE_JOB_ID"),
            _env("PADDLE_MASTER"),
        ],
        "spec.worker.replicas": [
            "Job spec.parallelism",
            "Job spec.completions",
            _env("PADDLE_NNODES"),
        ],
        "spec.collective.port": [
            _env("PADDLE_MASTER"),
            f"{_CONTAINER}.ports[master].containerPort",
        ],
        "spec.run.restarts": [f"{jobset.KIND} spec.failurePolicy.maxRestarts"],
    },
    launcher=CONTRACT_ENV,
    # A program that reads TRAINER_ID and TRAINERS (the Python SDK's entry point) gets the
    # pod's rank, its completion index, as PADDLE_RANK has it.
    trainer_identity=lambda count: (
        trainers_env(count, {"valueFrom": {"fieldRef": {"fieldPath": RANK_PATH}}}),
        "",
    ),
    init_sections=lambda ps: {"run": BOUNDED_RUN},
    init_comments={
        "spec.command": COMMAND_COMMENT,
        "spec.args": "the training script and its flags: the launcher runs it on every pod",
        "spec.worker": "one pod per node: PADDLE_NNODES; one rank per GPU in each",
    },
    group_restarts="a JobSet",
    peer_names="every rank finds rank 0 by its name in the job's headless Service, "
    "<job>-0.<job> (PADDLE_MASTER)",
    example_fields={"args": ["train.py"]},  # the launcher's training script
)
