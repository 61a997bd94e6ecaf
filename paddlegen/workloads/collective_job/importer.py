"""Workload `collective-job`'s importer: an Indexed Job running Paddle's launcher."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.workloads.base import TRAINING_CONTAINER, Spec
from paddlegen.workloads.collective_job.contract import CONTRACT_ENV, contract_env, service_name
from paddlegen.workloads.collective_job.settings import CollectiveSettings
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, expect_name, key_of, take
from paddlegen.workloads.import_pod import Pod, pod
from paddlegen.workloads.import_positions import FieldPath
from paddlegen.workloads.import_spec import (
    assemble,
    take_checkpoint,
    take_env,
    take_gang_size,
    take_run,
)
from paddlegen.workloads.shared.import_launcher import is_queued, unwrap
from paddlegen.workloads.shared.launcher import COMPLETION_INDEX, failure_policy

# What the rank may read the completion index from: the annotation paddlegen reads, or the label
# of the same name (Kubernetes >= 1.28).
_INDEX_REFS = {f"metadata.{where}['{COMPLETION_INDEX}']" for where in ("annotations", "labels")}


def collective_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """An Indexed Job with Paddle's launcher contract: what paddlegen renders for
    collective-job reads back without a note; for anything else, a note says what changes."""
    body = obj.setdefault("spec", {})
    spec = indexed_job(body, ctx, where, queued=is_queued(obj))
    take_checkpoint(spec, {"value": "0"})  # the attempt of a group that never starts again
    take_run(spec, body)
    take_gang_size(obj, spec, ctx)
    return spec


def indexed_job(
    body: dict[str, Any],
    ctx: Context,
    where: str,
    *,
    queued: bool,
    group: tuple[str, str] | None = None,
    at: FieldPath = ("spec",),
) -> Spec:
    """The spec of the Indexed Job ``body`` (a Job's spec) without its run fields. ``group``:
    the Job is a JobSet's, whose replicated job and subdomain name the pods' hosts, as the
    input gave them (collective_job/import_jobset.py); ``at``: where the object holds it."""
    replicas = _indexed_replicas(body, ctx, where)
    p = pod(body.setdefault("template", {}), ctx, where, at=(*at, "template"))
    if group is None:
        subdomain = ctx.subdomain = take(p.spec, "subdomain")  # its Service's: derived()
        service = service_name(ctx.name)
        if subdomain != service:
            ctx.note(
                COSMETIC,
                where,
                f"the pods' subdomain {subdomain or '(none)'} becomes {service}: paddlegen "
                "names the headless Service after the job",
            )
        # Rank 0 by the name the input's own Service gave it (renamed with the subdomain).
        host = f"{ctx.name}-0.{subdomain}"
    else:
        replicated, subdomain = group
        host = f"{ctx.name}-{replicated}-0-0.{subdomain}"  # jobset.pod_host's, as given
    port = _master_port(p, ctx, where)
    _contract(p.role, replicas, port, f"{host}:{port}", ctx, where, group=group is not None)
    unwrap(p.role, ctx, where)
    if p.restart_policy not in (None, "Never"):
        ctx.note(
            LOSSY,
            where,
            f"restartPolicy {p.restart_policy} becomes Never: a rank restarted in place cannot "
            "rejoin the others",
        )
    p.restart_policy = None  # always Never: the pod failure policy takes no other
    _failure_policy(body, ctx, where, queued)
    spec = assemble("collective-job", {"worker": (replicas, p)}, ctx, where)
    if port != CollectiveSettings().port:
        spec["collective"] = {"port": port}
    return spec


def _indexed_replicas(body: dict[str, Any], ctx: Context, where: str) -> int:
    """The ranks: every index runs at once (parallelism = completions)."""
    take(body, "completionMode")
    completions = take(body, "completions", default=1)
    parallelism = take(body, "parallelism", default=1)
    if parallelism != completions:
        ctx.note(
            LOSSY,
            where,
            f"parallelism {parallelism}, completions {completions}: a collective-job runs "
            f"all its {completions} ranks at once (parallelism {completions})",
        )
    return int(completions)


def _master_port(p: Pod, ctx: Context, where: str) -> int:
    """collective.port: from PADDLE_MASTER (`host:port`), else the container port `master`."""
    entry: dict[str, Any] = next(
        (e for e in p.role.get("env", []) if e.get("name") == "PADDLE_MASTER"), {}
    )
    text = str(entry.get("value", "")).rpartition(":")[2]
    ports = p.container.get("ports", [])
    named = next((q.get("containerPort") for q in ports if q.get("name") == "master"), None)
    port = int(text) if text.isdigit() and 0 < int(text) < 65536 else named
    port = port or CollectiveSettings().port
    ours = {"name": "master", "containerPort": port, "protocol": "TCP"}
    given = [{"protocol": "TCP", **q} for q in ports]
    if given and all({**q, "name": "master"} == ours for q in given):
        take(p.container, "ports")  # the one paddlegen declares
        if given != [ours]:
            ctx.note(COSMETIC, where, f"port {port} is declared as the container port `master`")
    return port


def _contract(
    role: dict[str, Any],
    replicas: int,
    port: int,
    master: str,
    ctx: Context,
    where: str,
    *,
    group: bool,
) -> None:
    """Remove the launcher's contract from the env: paddlegen derives it again; every entry
    that differs from what it derives is a note. ``master``: rank 0's address by the names
    the input gave its hosts, which paddlegen renames together."""
    derived = contract_env(ctx.name, replicas, port, group)
    theirs = {"PADDLE_MASTER": master}
    for entry in derived:
        name = entry["name"]
        given = take_env(role, name)
        if given is not None and _same_env(given, entry, theirs.get(name)):
            continue
        ours = json.dumps(entry.get("value", entry.get("valueFrom")))
        said = (
            "was not set"
            if given is None
            else (f"= {json.dumps(given.get('value', given.get('valueFrom')))}")
        )
        ctx.note(
            LOSSY,
            where,
            f"env {name} {said}; paddlegen sets {ours} (the launcher's contract, "
            f"{CONTRACT_ENV[name]})",
        )


def _same_env(given: dict[str, Any], derived: dict[str, Any], alias: str | None) -> bool:
    """Whether ``given`` gives the pods what ``derived`` does (the API server adds apiVersion
    v1 to a fieldRef; the rank may come from the index label too)."""
    ref = dict(given.get("valueFrom", {}).get("fieldRef", {}))
    if ref.get("apiVersion") == "v1":
        ref.pop("apiVersion")
    if "valueFrom" in derived:
        wanted = derived["valueFrom"]["fieldRef"]["fieldPath"]
        paths = _INDEX_REFS if wanted in _INDEX_REFS else {wanted}
        return (
            set(given) == {"name", "valueFrom"}
            and ref.keys() == {"fieldPath"}
            and (ref["fieldPath"] in paths)
        )
    return set(given) == {"name", "value"} and given["value"] in (derived["value"], alias)


def _failure_policy(body: dict[str, Any], ctx: Context, where: str, queued: bool) -> None:
    """paddlegen's pod failure policy: one failed or evicted rank fails the whole Job (a
    queued job's failed ranks are counted instead, as Kueue's preemption stops them)."""
    given = take(body, "podFailurePolicy")
    if body.get("podReplacementPolicy") == "Failed":
        take(body, "podReplacementPolicy")  # the only one a pod failure policy allows
    if given == failure_policy(TRAINING_CONTAINER, queued):
        return
    was = (
        f"podFailurePolicy {json.dumps(given)}"
        if given
        else "no podFailurePolicy (a failed pod's index was retried alone)"
    )
    ctx.note(
        LOSSY,
        where,
        f"{was} becomes paddlegen's: a rank that fails, or is evicted, fails the whole Job at "
        "once (a rank started again alone cannot rejoin the others)"
        + (
            ", or, queued, counts against backoffLimit: Kueue's preemption stops ranks with "
            "any exit code, and the count of a suspended Job's ranks does not grow"
            if queued
            else ""
        ),
    )


SERVICE = ("v1", "Service")


def derived(objects: list[dict[str, Any]], spec: Spec, ctx: Context) -> list[dict[str, Any]]:
    """The headless Service of ``objects`` that collective-job renders for its pods' subdomain
    (Workload.derived_objects)."""
    return [
        o for o in objects if key_of(o) == SERVICE and _service_is_derived(o, ctx.subdomain, ctx)
    ]


def _service_is_derived(obj: dict[str, Any], subdomain: str | None, ctx: Context) -> bool:
    """collective-job's headless Service, the pods' subdomain, which it regenerates (named
    after the job); fields that differ from what it regenerates stay and are listed."""
    if obj["metadata"]["name"] != subdomain:
        return False
    expect_name(obj, ctx.name, ctx)
    body = obj.get("spec", {})
    if body.get("clusterIP") == "None":
        take(body, "clusterIP")
    if body.get("publishNotReadyAddresses") is True:
        take(body, "publishNotReadyAddresses")
    if body.get("selector") in (
        {label: ctx.name} for label in ("batch.kubernetes.io/job-name", "job-name")
    ):
        take(body, "selector")
    return True
