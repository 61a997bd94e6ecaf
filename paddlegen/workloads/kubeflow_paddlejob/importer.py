"""Workload `kubeflow-paddlejob`'s importer: a Kubeflow PaddleJob back to a spec."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_pod import pod
from paddlegen.workloads.import_spec import assemble, scheduling_policy, take_run
from paddlegen.workloads.kubeflow_paddlejob.names import ROLES, default_restart_policy

_REPLICAS = ("spec", "paddleReplicaSpecs")
_KUBEFLOW_ROLES = {replica: role for role, replica in ROLES.items()}
# A replica's restartPolicy when it gives none (training-operator v1.9.0
# pkg/apis/kubeflow.org/v1/paddlepaddle_types.go:31, paddlepaddle_defautls.go:76).
OPERATOR_RESTART_POLICY = "OnFailure"
SPEC_RESTART_POLICIES = ("Never", "OnFailure")


def kubeflow_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A Kubeflow training-operator PaddleJob (kubeflow.org/v1)."""
    body = obj.setdefault("spec", {})
    replica_specs = body.get("paddleReplicaSpecs", {})
    pods, policies = {}, {}
    for kind, role in _KUBEFLOW_ROLES.items():
        if kind in replica_specs:
            # the template first: taking a replica spec's last field drops it
            template = replica_specs[kind].setdefault("template", {})
            policies[kind] = take(replica_specs, kind, "restartPolicy")
            replicas = take(replica_specs, kind, "replicas", default=1)
            pods[role] = (
                replicas,
                pod(template, ctx, f"{where} {kind}", at=(*_REPLICAS, kind, "template")),
            )
    spec = assemble("kubeflow-paddlejob", pods, ctx, where)
    ports = {json.dumps(p.container.get("ports")) for _, p in pods.values()}
    master = json.loads(ports.pop()) if len(ports) == 1 else None
    if master and len(master) == 1 and master[0].get("name") == "master":
        spec["kubeflow"] = {"port": master[0]["containerPort"]}
        for _, p in pods.values():
            take(p.container, "ports")
    _restart_policy(spec, policies, ctx, where)
    run_policy = body.get("runPolicy", {})
    if "cleanPodPolicy" in run_policy:
        spec.setdefault("kubeflow", {})["cleanPodPolicy"] = take(run_policy, "cleanPodPolicy")
    take_run(spec, run_policy)
    if "schedulingPolicy" in run_policy:
        scheduling_policy(
            spec, run_policy["schedulingPolicy"], ctx, where, "runPolicy.schedulingPolicy"
        )
    return spec


def _restart_policy(spec: Spec, given: dict[str, str | None], ctx: Context, where: str) -> None:
    """spec.run.restartPolicy: what the replicas ran with (``given``, None where the operator's
    default served), unless paddlegen renders it anyway; what changes is noted."""
    ran = {kind: policy or OPERATOR_RESTART_POLICY for kind, policy in given.items()}
    if not ran:
        return  # no replica: the spec's validation says so
    # Never where a replica ran with it (one failed replica fails the job), else OnFailure,
    # which restarts a failed pod as ExitCode and Always did
    kept = sorted({p if p in SPEC_RESTART_POLICIES else "OnFailure" for p in ran.values()})[0]
    ps = "Master" in ran
    for kind, policy in ran.items():
        at = (*_REPLICAS, kind, "restartPolicy")
        if policy != kept:
            ctx.note(
                LOSSY,
                where,
                f"{kind} restartPolicy {policy} becomes {kept}: the spec's run.restartPolicy, "
                f"{' or '.join(SPEC_RESTART_POLICIES)}, is every replica's",
                at=at,
            )
        elif kept != default_restart_policy(ps) and given[kind] is None:
            ctx.note(
                COSMETIC,
                where,
                f"{kind} restartPolicy {kept}, the operator's default, is written as "
                "run.restartPolicy: without it paddlegen renders Never for a job without "
                "parameter servers (a Worker restarted in place comes back with rank -1 and "
                "never rejoins the others)",
                at=at,
            )
    if kept != default_restart_policy(ps):
        spec.setdefault("run", {})["restartPolicy"] = kept
