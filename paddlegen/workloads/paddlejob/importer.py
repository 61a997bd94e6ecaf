"""Workload `paddlejob`'s importer: a PaddleFlow PaddleJob back to a spec."""

from __future__ import annotations

from typing import Any

from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_pod import pod
from paddlegen.workloads.import_spec import assemble, scheduling_policy
from paddlegen.workloads.paddlejob.operator import COORDINATE_CONTAINER, GLOO_PORT, host_network_dns


def paddleflow_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A PaddleFlow PaddleJob (batch.paddlepaddle.org/v1)."""
    body = obj.setdefault("spec", {})
    # paddlegen's own Gloo endpoint (workloads/paddlejob gloo_env): derived, not the spec's
    gloo = {
        "name": "PADDLE_GLOO_HTTP_ENDPOINT",
        "value": f"{obj.get('metadata', {}).get('name')}-ps-0:{GLOO_PORT}",
    }
    gains_gloo = False  # a pod the operator's Gloo endpoint reached, as the input ran
    for role in ("ps", "worker", "heter"):
        template_spec = body.get(role, {}).get("template", {}).get("spec", {})
        if template_spec.get("schedulerName") == "default-scheduler":
            # paddlegen writes it on every PaddleFlow pod that is not Volcano's
            # (workloads/paddlejob): nothing to carry over, nothing lost.
            take(template_spec, "schedulerName")
        _drop_coordinate_container(template_spec, ctx, f"{where} {role}")
        container = (template_spec.get("containers") or [{}])[0]
        if body.get("withGloo") and gloo in container.get("env", []):
            container["env"].remove(gloo)
            if not container["env"]:
                del container["env"]
        elif role in body:
            gains_gloo = True
    if gains_gloo and body.get("withGloo") and "ps" in body:
        _note_gloo(gloo, body.get("intranet"), ctx, where)
    pods = {}
    dns = host_network_dns(body.get("intranet"))  # what paddlegen gives the pods
    for role in ("ps", "worker", "heter"):
        if role in body:
            # the template first: taking the replicas of a role that has nothing else drops it
            template = body[role].setdefault("template", {})
            replicas = take(body, role, "replicas", default=1)
            pods[role] = (
                replicas,
                pod(
                    template, ctx, f"{where} {role}", dns_policy=dns, at=("spec", role, "template")
                ),
            )
    spec = assemble("paddlejob", pods, ctx, where)
    settings = {
        key: take(body, key)
        for key in ("cleanPodPolicy", "withGloo", "intranet", "elastic")
        if key in body
    }
    if settings:
        spec["paddlejob"] = settings
    if "schedulingPolicy" in body:
        scheduling_policy(spec, body["schedulingPolicy"], ctx, where, "schedulingPolicy")
    return spec


def _note_gloo(gloo: dict[str, str], intranet: str | None, ctx: Context, where: str) -> None:
    """The Gloo endpoint the rendered pods gain (workloads/paddlejob gloo_env): the same
    rendezvous under intranet Service, a working one instead of the server's own port
    otherwise."""
    ctx.note(
        COSMETIC if intranet == "Service" else LOSSY,
        where,
        f"the rendered pods gain env {gloo['name']}={gloo['value']}: paddlegen serves Gloo's "
        "rendezvous on the first parameter server's Service, as the operator's own endpoint "
        + (
            "does under intranet Service"
            if intranet == "Service"
            else "(derived from the server's random port outside intranet Service) lands on "
            "the server's own port, where the trainers' pushes make them crash"
        ),
        at=("spec", "withGloo"),
    )


def _drop_coordinate_container(pod_spec: dict[str, Any], ctx: Context, where: str) -> None:
    """The operator's own init container, where a copy of a pod put it in the template: the
    operator appends it to every pod itself (paddlejob/operator.py COORDINATE_CONTAINER)."""
    inits = pod_spec.get("initContainers", [])
    for init in [c for c in inits if c.get("name") == COORDINATE_CONTAINER]:
        inits.remove(init)
        ctx.note(
            COSMETIC,
            where,
            f"init container '{COORDINATE_CONTAINER}' is the operator's: it adds "
            "it to every pod itself",
        )
    if "initContainers" in pod_spec and not inits:
        del pod_spec["initContainers"]
