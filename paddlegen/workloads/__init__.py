"""The WORKLOADS registry: each workload is one template folder plus the names it derives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Spec = dict[str, Any]


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str
    folder: str  # templates/<folder>/
    # Names Kubernetes or an operator derives from metadata.name (pods, services): each must
    # be a DNS-1035 label of at most 63 characters, which bounds the length of the job name.
    derived_names: Callable[[str, Spec], list[str]]


def _replica_names(name: str, spec: Spec, roles: dict[str, str]) -> list[str]:
    out = []
    for role, suffix in roles.items():
        if role in spec or role == "worker":
            replicas = spec.get(role, {}).get("replicas", 1)
            out.append(f"{name}-{suffix}-{replicas - 1}")
    return out


WORKLOADS: dict[str, Workload] = {
    "job": Workload(
        "job",
        "a single-node batch/v1 Job (seed 000)",
        "job",
        lambda name, spec: [name],  # the Job's pods carry it as the job-name label value
    ),
    "distributed-job": Workload(
        "distributed-job",
        "one batch/v1 Job whose pods each run a pserver and a trainer, with hostPorts "
        "(seeds 001, 004)",
        "distributed-job",
        lambda name, spec: [name],
    ),
    "paddlejob": Workload(
        "paddlejob",
        "the PaddleFlow PaddleJob custom resource, batch.paddlepaddle.org/v1 (seed 003)",
        "paddlejob",
        lambda name, spec: _replica_names(
            name, spec, {"ps": "ps", "worker": "worker", "heter": "heter"}
        ),
    ),
    "kubeflow-paddlejob": Workload(
        "kubeflow-paddlejob",
        "the Kubeflow training-operator PaddleJob, kubeflow.org/v1",
        "kubeflow-paddlejob",
        lambda name, spec: _replica_names(name, spec, {"ps": "master", "worker": "worker"}),
    ),
}

DEFAULT_WORKLOAD = "paddlejob"
