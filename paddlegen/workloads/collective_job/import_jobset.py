"""Workload `collective-job`'s importer of a JobSet: the group restarts (spec.run.restarts) of
one Indexed Job running Paddle's launcher, as shared/jobset.py renders it or as a
person writes it. What the spec cannot carry is a note; a JobSet that is no such group (several
replicated jobs, or no Paddle launcher) is refused.

JobSet's sources cited are sigs.k8s.io/jobset at v0.12.0."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.errors import InputError
from paddlegen.workloads.base import Spec
from paddlegen.workloads.collective_job.importer import indexed_job
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_spec import env_of, take_checkpoint, take_gang_size
from paddlegen.workloads.shared import jobset
from paddlegen.workloads.shared.import_launcher import is_queued
from paddlegen.workloads.shared.launcher import NO_NODE_COUNT_EXIT

# The launcher's module: a JobSet written by hand may start it with flags, not the contract's
# env (PADDLE_MASTER), which paddlegen then gives its pods.
_LAUNCH_MODULE = "paddle.distributed.launch"
_RULES = ("spec", "failurePolicy", "rules")


def jobset_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A JobSet of one replicated job, an Indexed Job running Paddle's launcher: a
    collective-job spec with run.restarts its failurePolicy.maxRestarts."""
    body = obj.setdefault("spec", {})
    replicated = _the_replicated_job(body, where)
    name = take(replicated, "name")
    take(replicated, "replicas")
    if name != jobset.REPLICATED_JOB:
        ctx.note(
            COSMETIC,
            where,
            f"replicated job {name} becomes {jobset.REPLICATED_JOB}: paddlegen names it, and "
            "rank 0's address with it",
            ("spec", "replicatedJobs", 0, "name"),
        )
    subdomain = take(body, "network", "subdomain", default=ctx.name)
    if subdomain != ctx.name:
        ctx.note(
            COSMETIC,
            where,
            f"the pods' subdomain {subdomain} becomes {ctx.name}: paddlegen leaves the JobSet's "
            "headless Service its default name, the JobSet's",
            ("spec", "network", "subdomain"),
        )
    for key in ("enableDNSHostnames", "publishNotReadyAddresses"):
        if body.get("network", {}).get(key) is True:  # paddlegen's, and JobSet's default
            take(body, "network", key)
    template = replicated.setdefault("template", {})
    job = template.setdefault("spec", {})
    spec = indexed_job(
        job,
        ctx,
        where,
        queued=is_queued(obj),
        group=(str(name), subdomain),
        at=("spec", "replicatedJobs", 0, "template", "spec"),
    )
    take_checkpoint(spec, jobset.ATTEMPT_ENV_SOURCE)
    _run(spec, body, job, ctx, where)
    take_gang_size(template, spec, ctx, template.get("metadata", {}).get("annotations", {}))
    return spec


def _the_replicated_job(body: dict[str, Any], where: str) -> dict[str, Any]:
    """The JobSet's one replicated job, of one Indexed Job running Paddle's launcher; any
    other JobSet is refused: a collective-job is one group of ranks."""
    jobs = body.get("replicatedJobs") or []
    shape = "a JobSet of one replicated job, an Indexed Job running Paddle's launcher"
    if len(jobs) != 1:
        names = ", ".join(str(j.get("name")) for j in jobs)
        raise InputError(
            f"{where}: {len(jobs)} replicated jobs ({names}): a collective-job is one group "
            f"of ranks, so import reads {shape}"
        )
    replicated: dict[str, Any] = jobs[0]
    name, count = replicated.get("name"), replicated.get("replicas", 1)
    if count != 1:
        raise InputError(
            f"{where}: replicated job {name} makes {count} Jobs, each a group of ranks of its "
            f"own: a collective-job is one group, so import reads {shape}"
        )
    template = replicated.get("template", {})
    mode = template.get("spec", {}).get("completionMode", "Indexed")  # JobSet's default
    why = (
        f"is not Indexed (completionMode {mode}): a rank is its pod's completion index"
        if mode != "Indexed"
        else ""
        if _runs_launcher(template)
        else f"runs no Paddle launcher (neither PADDLE_MASTER in its env nor {_LAUNCH_MODULE} "
        "in its command or args)"
    )
    if why:
        raise InputError(f"{where}: replicated job {name} {why}: import reads {shape}")
    return replicated  # the input's own: the mapper takes what it carries over


def _runs_launcher(job: dict[str, Any]) -> bool:
    """Whether a Job template's pods get the launcher's contract or start the launcher."""
    if any(e.get("name") == "PADDLE_MASTER" for e in env_of(job)):
        return True
    containers = job.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
    words = [w for c in containers for key in ("command", "args") for w in c.get(key) or []]
    return _LAUNCH_MODULE in words


def _run(spec: Spec, body: dict[str, Any], job: dict[str, Any], ctx: Context, where: str) -> None:
    """spec.run: restarts from the failure policy, each attempt's deadline from the Job, the
    time to live from the JobSet; the Job's backoffLimit is paddlegen's, 0."""
    run = spec.setdefault("run", {})
    restarts = _restarts(body, ctx, where)
    if restarts:
        run["restarts"] = restarts
    if "activeDeadlineSeconds" in job:
        run["activeDeadlineSeconds"] = take(job, "activeDeadlineSeconds")
    if "ttlSecondsAfterFinished" in body:
        run["ttlSecondsAfterFinished"] = take(body, "ttlSecondsAfterFinished")
    if not run:
        spec.pop("run")
    backoff = take(job, "backoffLimit")
    if restarts and backoff != 0:
        ctx.note(
            LOSSY,
            where,
            f"backoffLimit {json.dumps(backoff) if backoff is not None else '6 (the default)'}"
            " becomes 0: any failed rank fails the Job at once, and the JobSet starts every "
            "rank again (a rank started again alone cannot rejoin the others)",
        )
    elif not restarts and backoff is not None:
        run["backoffLimit"] = backoff


def _restarts(body: dict[str, Any], ctx: Context, where: str) -> int:
    """failurePolicy.maxRestarts, with paddlegen's rules taken; any other rule is a note."""
    restarts = int(take(body, "failurePolicy", "maxRestarts", default=0))
    ours = jobset.failure_policy(restarts, NO_NODE_COUNT_EXIT)["rules"]
    rules = body.get("failurePolicy", {}).get("rules", [])
    for i, rule in enumerate(rules):
        if rule in ours:
            continue
        ctx.note(
            LOSSY,
            where,
            f"failurePolicy rule {json.dumps(rule.get('name', i))} (action "
            f"{rule.get('action')}) is not carried over: paddlegen's JobSet fails at once only "
            "on a pod without PADDLE_NNODES (rule NoNodeCount) and starts every rank again on "
            "any other failure, up to run.restarts times",
            (*_RULES, i),
        )
    missing = [rule["name"] for rule in ours if rule not in rules]
    take(body, "failurePolicy", "rules")
    if not restarts:
        ctx.note(
            COSMETIC,
            where,
            "no failurePolicy.maxRestarts: the JobSet fails at the first failure, as the "
            "Indexed Job and headless Service that the spec renders instead do (no JobSet "
            "controller needed)",
        )
    elif missing:
        ctx.note(
            COSMETIC,
            where,
            f"failurePolicy gains rule {', '.join(missing)}: a pod without PADDLE_NNODES, "
            "which paddlegen always sets, fails the JobSet at once",
        )
    return restarts
