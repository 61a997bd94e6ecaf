"""Workload `paddlejob`: the PaddleFlow operator's PaddleJob (seed 003). The operator picks the
mode from the roles (ps -> PS, several workers -> Collective, else Single) and injects the env
(PADDLE_TRAINER_ID, endpoints, ...) and ports itself, so none are rendered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.workloads.base import Workload, pod, replica_pod_names

if TYPE_CHECKING:
    from paddlegen.spec.model import Job

ROLES = {"ps": "ps", "worker": "worker", "heter": "heter"}
SETTINGS = ("cleanPodPolicy", "withGloo", "intranet", "elastic")  # spec.paddlejob -> spec


def context(job: Job) -> dict[str, Any]:
    # Only the user's own restartPolicy: unset, the operator chooses per role (OnFailure for
    # Service-mode workers and elastic jobs, else Never).
    restart = job.run.restartPolicy
    given = {key: getattr(job.paddlejob, key) for key in SETTINGS}
    return {
        "settings": {key: value for key, value in given.items() if value is not None},
        "pods": {name: pod(job, role, restart_policy=restart) for name, role in job.roles.items()},
    }


WORKLOAD = Workload(
    name="paddlejob",
    summary="the PaddleFlow PaddleJob custom resource, batch.paddlepaddle.org/v1 (seed 003)",
    title="PaddleFlow PaddleJob",
    kind=("batch.paddlepaddle.org/v1", "PaddleJob"),
    roles=ROLES,
    derived_names=lambda name, spec: replica_pod_names(name, spec, ROLES),
    context=context,
    importer="paddlegen.authoring.import_workloads:paddleflow_job",
    settings="paddlejob",
    pod_template="PaddleJob spec.<role>.template",
    scheduling_policy="PaddleJob spec.schedulingPolicy",
    explain={
        "spec.worker.replicas": ["PaddleJob spec.worker.replicas"],
        "spec.ps.replicas": ["PaddleJob spec.ps.replicas"],
        "spec.heter.replicas": ["PaddleJob spec.heter.replicas"],
        "spec.run.restartPolicy": ["{tmpl}.spec.restartPolicy"],
        **{f"spec.paddlejob.{key}": [f"PaddleJob spec.{key}"] for key in SETTINGS},
    },
)
