"""The launcher's contract as a collective-job's pods get it: its env, and rank 0's address by
the name of the job's headless Service.

Paddle's sources cited are python/paddle/distributed/launch/ at v3.3.1."""

from __future__ import annotations

from typing import Any

from paddlegen.workloads.shared import jobset
from paddlegen.workloads.shared.launcher import rank_env

# The env every pod gets (the launcher reads it: context/args_envs.py:21-47), and its source.
CONTRACT_ENV = {
    "POD_IP": "the pod's IP",
    "PADDLE_RANK": "the pod's completion index",
    "PADDLE_NNODES": "worker.replicas",
    "PADDLE_JOB_ID": "metadata.name",
    "PADDLE_MASTER": "rank 0's address and collective.port",
}


def service_name(job: str) -> str:
    """The headless Service, and the pods' subdomain: the job's own name (a JobSet's too)."""
    return job


def master(name: str, port: int, group: bool = False) -> str:
    """Rank 0 by name, `<job>-0.<service>` (a JobSet's: ``jobset.pod_host``), relative to the
    pods' namespace (their DNS search path): a kustomize overlay or `kubectl apply -n` may move
    the job."""
    host = jobset.pod_host(name, 0) if group else f"{name}-0"
    return f"{host}.{service_name(name)}:{port}"


def contract_env(name: str, replicas: int, port: int, group: bool = False) -> list[dict[str, Any]]:
    """The launcher's contract for job ``name`` (a JobSet's, with ``group``): the env
    overrides the launcher's flags (context/__init__.py:100-107)."""
    return [
        *rank_env(),
        {"name": "PADDLE_NNODES", "value": str(replicas)},
        {"name": "PADDLE_JOB_ID", "value": name},
        {"name": "PADDLE_MASTER", "value": master(name, port, group)},
    ]
