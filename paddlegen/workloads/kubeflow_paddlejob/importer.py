"""Workload `kubeflow-paddlejob`'s importer: a Kubeflow PaddleJob back to a spec."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import LOSSY, Context, take
from paddlegen.workloads.import_pod import pod
from paddlegen.workloads.import_spec import assemble, scheduling_policy, take_run
from paddlegen.workloads.kubeflow_paddlejob.names import ROLES

_KUBEFLOW_ROLES = {replica: role for role, replica in ROLES.items()}


def kubeflow_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A Kubeflow training-operator PaddleJob (kubeflow.org/v1)."""
    body = obj.setdefault("spec", {})
    replica_specs = body.get("paddleReplicaSpecs", {})
    pods, policies = {}, set()
    for kind, role in _KUBEFLOW_ROLES.items():
        if kind in replica_specs:
            # the template first: taking a replica spec's last field drops it
            template = replica_specs[kind].setdefault("template", {})
            policies.add(take(replica_specs, kind, "restartPolicy", default="OnFailure"))
            replicas = take(replica_specs, kind, "replicas", default=1)
            pods[role] = (replicas, pod(template, ctx, f"{where} {kind}"))
    spec = assemble("kubeflow-paddlejob", pods, ctx, where)
    ports = {json.dumps(p.container.get("ports")) for _, p in pods.values()}
    master = json.loads(ports.pop()) if len(ports) == 1 else None
    if master and len(master) == 1 and master[0].get("name") == "master":
        spec["kubeflow"] = {"port": master[0]["containerPort"]}
        for _, p in pods.values():
            take(p.container, "ports")
    if len(policies) > 1 or policies - {"OnFailure"}:
        spec.setdefault("run", {})["restartPolicy"] = sorted(policies)[0]
        if len(policies) > 1:
            ctx.note(
                LOSSY,
                where,
                f"replica restartPolicy differs ({', '.join(sorted(policies))}); "
                f"{sorted(policies)[0]} now serves both",
            )
    run_policy = body.get("runPolicy", {})
    if "cleanPodPolicy" in run_policy:
        spec.setdefault("kubeflow", {})["cleanPodPolicy"] = take(run_policy, "cleanPodPolicy")
    take_run(spec, run_policy)
    if "schedulingPolicy" in run_policy:
        scheduling_policy(
            spec, run_policy["schedulingPolicy"], ctx, where, "runPolicy.schedulingPolicy"
        )
    return spec
