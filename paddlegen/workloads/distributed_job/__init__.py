"""Workload `distributed-job`: one batch/v1 Job whose pods each run a pserver
and a trainer. The legacy image's start_paddle.py lists the Job's pods (label job-name) through
the API server, sorts their IPs into trainer ids and waits until every listed pod is Running."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.workloads.base import (
    RUN_KEYS,
    Importer,
    Imports,
    Workload,
    batch_job_annotations,
    one_pod_per_node,
    pod,
    run_fields,
)
from paddlegen.workloads.distributed_job.settings import SECTION, DistributedSettings
from paddlegen.workloads.objects import BATCH_JOB

if TYPE_CHECKING:
    from paddlegen.spec.model import Job
    from paddlegen.spec.rule import WorkloadRules

_CONTAINER = "{tmpl}.spec.containers[paddle]"


def _env(name: str) -> str:
    return f"{_CONTAINER}.env[{name}].value"


def env(job: Job) -> list[dict[str, Any]]:
    """The env contract of the image. JOB_NAMESPACE comes from the downward API: a literal
    would go stale as soon as a kustomize overlay or `kubectl apply -n` moves the Job."""
    d: DistributedSettings = job.settings
    return [
        {"name": "JOB_NAME", "value": job.name},
        {"name": "JOB_PATH", "value": job.volume(d.volume or "").mountPath},
        {"name": "JOB_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "TRAIN_CONFIG_DIR", "value": d.trainConfigDir},
        {"name": "CONF_PADDLE_NIC", "value": d.nic},
        {"name": "CONF_PADDLE_PORT", "value": str(d.port)},
        {"name": "CONF_PADDLE_PORTS_NUM", "value": str(d.portsNum)},
        {"name": "CONF_PADDLE_PORTS_NUM_SPARSE", "value": str(d.portsNumSparse)},
        {"name": "CONF_PADDLE_GRADIENT_NUM", "value": str(job.roles["worker"].replicas)},
        {"name": "TRAINER_COUNT", "value": str(d.trainerCount)},
    ]


def ports(job: Job) -> list[dict[str, Any]]:
    """The dense and sparse ports, each also a hostPort when ``hostPorts`` is on."""
    d: DistributedSettings = job.settings
    out = []
    for i in range(d.portsNum + d.portsNumSparse):
        port: dict[str, Any] = {"name": f"jobport{i}", "containerPort": d.port + i}
        port["protocol"] = "TCP"
        if d.hostPorts:
            port["hostPort"] = d.port + i
        out.append(port)
    return out


def affinity(job: Job) -> dict[str, Any] | None:
    """Equal hostPorts allow one pod per node: a required anti-affinity states that rule in
    the manifest, merged into any affinity the spec gives. Without hostPorts every pod has its
    own IP, so pods may share a node (and the role's own affinity applies)."""
    settings: DistributedSettings = job.settings
    if not settings.hostPorts:
        return None
    return one_pod_per_node(job.roles["worker"].affinity, {"job-name": job.name})


def run(job: Job) -> dict[str, Any]:
    """A replacement pod would wait forever: start_paddle.py waits until every pod it lists is
    Running, and a failed pod stays listed. So by default the first failed pod fails the Job."""
    out = run_fields(job)
    if "backoffLimit" not in out and job.run.restart_policy == "Never":
        out = {"backoffLimit": 0, **out}
    return out


def peer_account(job: Job) -> str:
    """The ServiceAccount the pods list their peers with: the user's (workload identity), which
    the job's Role is then bound to, else one of the job's own, named after it."""
    return job.roles["worker"].serviceAccountName or job.name


def context(job: Job) -> dict[str, Any]:
    worker = job.roles["worker"]
    settings: DistributedSettings = job.settings
    return {
        "run": run(job),
        # Only an account of the job's own is rendered; the user's exists already.
        "own_account": worker.serviceAccountName is None,
        "account": peer_account(job),
        "job_annotations": batch_job_annotations(job),
        "pod": pod(
            job,
            worker,
            restart_policy=job.run.restart_policy,
            env=env(job),
            ports=ports(job),
            command=worker.command or settings.command,
            service_account=peer_account(job),
            affinity=affinity(job),
        ),
    }


def imports() -> Imports:
    """The batch Job of the legacy image read back, and its ServiceAccount, Role and
    RoleBinding."""
    from paddlegen.workloads.distributed_job import importer

    batch_job = Importer(BATCH_JOB, importer.distributed_job, claims=importer.is_distributed)
    return Imports((batch_job,), derived=importer.derived)


def own_rules() -> WorkloadRules:
    """The rules only its specs get, and what it adds to those every spec gets."""
    from paddlegen.workloads.distributed_job.rules import RULES

    return RULES


WORKLOAD = Workload(
    name="distributed-job",
    summary="a multi-pod `batch/v1` Job for the legacy pserver/trainer image",
    title="Job",
    objects=(BATCH_JOB,),
    roles={"worker": "worker"},
    derived_names=lambda name, spec: [name],
    context=context,
    imports=imports,
    rules=own_rules,
    settings=SECTION,
    run_keys=RUN_KEYS,
    pod_template="Job spec.template",
    run_policy="Job spec",
    explain={
        "metadata.name": ["Job metadata.name", _env("JOB_NAME"), "ServiceAccount metadata.name"],
        "spec.worker.replicas": [
            "Job spec.parallelism",
            "Job spec.completions",
            _env("CONF_PADDLE_GRADIENT_NUM"),
        ],
        "spec.run.restartPolicy": ["{tmpl}.spec.restartPolicy"],
        "spec.serviceAccountName": [
            "{tmpl}.spec.serviceAccountName",
            "DataJob spec.template.spec.serviceAccountName",
            "RoleBinding subjects",
            "ServiceAccount metadata.name",
        ],
        # the trainers' token is mounted whatever it says (rule service-account-token)
        "spec.automountServiceAccountToken": [
            "DataJob spec.template.spec.automountServiceAccountToken"
        ],
        "spec.distributed.volume": [_env("JOB_PATH")],
        "spec.distributed.trainConfigDir": [_env("TRAIN_CONFIG_DIR")],
        "spec.distributed.nic": [_env("CONF_PADDLE_NIC")],
        "spec.distributed.port": [_env("CONF_PADDLE_PORT"), f"{_CONTAINER}.ports"],
        "spec.distributed.portsNum": [_env("CONF_PADDLE_PORTS_NUM"), f"{_CONTAINER}.ports"],
        "spec.distributed.portsNumSparse": [
            _env("CONF_PADDLE_PORTS_NUM_SPARSE"),
            f"{_CONTAINER}.ports",
        ],
        "spec.distributed.trainerCount": [_env("TRAINER_COUNT")],
        "spec.distributed.hostPorts": [f"{_CONTAINER}.ports", "{tmpl}.spec.affinity"],
    },
    # A volume named "data" is what init's storage answer makes.
    init_sections=lambda ps: {
        "distributed": {"volume": "data", "trainConfigDir": "quick_start"},
        "run": {"activeDeadlineSeconds": 86400},
    },
    needs_storage="its image reads the trainer config and the data from a shared volume (JOB_PATH)",
    api_token="its image finds its peers by listing the job's pods through the API server "
    "(start_paddle.py), with the token of the account paddlegen binds to a Role that may list "
    "them",
    # the legacy image's start script reads its cluster config from a shared volume
    example_fields={
        "volumes": [{"name": "jobpath", "mountPath": "/home/jobpath", "emptyDir": {}}],
        "distributed": {"volume": "jobpath", "trainConfigDir": "quick_start"},
    },
)
