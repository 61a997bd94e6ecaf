"""`paddlegen import`: a spec from the pods an importer read, and what several importers share."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.spec.model import (
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_GRACE,
    GPU_RESOURCE,
    RESTART_ATTEMPT_ENV,
    ROLE_FIELDS,
)
from paddlegen.workloads.base import GROUP_MIN_MEMBER, RUN_KEYS, Spec
from paddlegen.workloads.import_defaults import DEFAULT_GRACE
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_pod import Pod
from paddlegen.workloads.shared.launcher import without_checkpoint_override


def env_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The env entries of every container of a Job's pod template."""
    containers = job.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
    return [e for c in containers for e in c.get("env", []) if isinstance(e, dict)]


def take_env(role: dict[str, Any], name: str) -> dict[str, Any] | None:
    """Remove the env entry ``name`` from a role, returning it."""
    env = role.get("env", [])
    entry = next((e for e in env if e.get("name") == name), None)
    if entry is not None:
        env.remove(entry)
        if not env:
            role.pop("env")
    return entry


def literal_env(role: dict[str, Any], name: str, ctx: Context, where: str) -> str | None:
    """Remove the env entry ``name`` from a role, returning its literal value (None, noted,
    for one that comes from elsewhere)."""
    entry = take_env(role, name)
    if entry is not None and set(entry) != {"name", "value"}:
        ctx.note(
            LOSSY,
            where,
            f"env {name} comes from {json.dumps(entry.get('valueFrom'))}; only a "
            "literal value can be read back, so paddlegen derives it",
        )
        return None
    return None if entry is None else str(entry["value"])


def assemble(workload: str, pods: dict[str, tuple[int, Pod]], ctx: Context, where: str) -> Spec:
    """A spec from the roles' pods: values every role shares move up to the spec."""
    spec: Spec = {"workload": workload}
    roles = {name: {"replicas": replicas, **p.role} for name, (replicas, p) in pods.items()}
    for key in ROLE_FIELDS:
        values = [role.get(key) for role in roles.values()]
        if values and values[0] is not None and all(v == values[0] for v in values):
            spec[key] = values[0]
            for role in roles.values():
                role.pop(key)
    spec.update(roles)
    volumes: dict[str, dict[str, Any]] = {}
    for _, p in pods.values():
        for volume in p.volumes:
            if volumes.setdefault(volume["name"], volume) != volume:
                ctx.note(
                    LOSSY,
                    where,
                    f"volume '{volume['name']}' differs between roles; the first one is kept",
                )
    for name in volumes:
        missing = [r for r, (_, p) in pods.items() if name not in {v["name"] for v in p.volumes}]
        if missing:
            ctx.note(
                LOSSY,
                where,
                f"volume '{name}' is now also mounted into {', '.join(missing)} "
                "(paddlegen mounts every volume into every role)",
            )
    if volumes:
        spec["volumes"] = list(volumes.values())
    _job_wide(spec, [p for _, p in pods.values()], ctx, where)
    return spec


def _job_wide(spec: Spec, pods: list[Pod], ctx: Context, where: str) -> None:
    """Settings paddlegen applies to every pod: one value must serve all roles."""
    for key, values in (
        ("shm", [p.shm for p in pods]),
        ("restartPolicy", [p.restart_policy for p in pods]),
        ("security", [p.security for p in pods]),
        ("networks", [p.networks for p in pods]),
    ):
        given = [v for v in values if v]
        if given and any(v != given[0] for v in values):
            ctx.note(
                LOSSY,
                where,
                f"{key} differs between roles ({', '.join(map(json.dumps, values))}); "
                f"{json.dumps(given[0])} now serves every role",
            )
        if not given:
            continue
        if key == "restartPolicy":
            spec.setdefault("run", {})["restartPolicy"] = given[0]
        else:
            spec[key] = given[0]
    accelerators = list(dict.fromkeys(p.accelerator for p in pods if p.accelerator))
    if len(accelerators) > 1:
        ctx.note(
            LOSSY,
            where,
            f"the roles' devices differ ({', '.join(accelerators)}); gpus counts "
            f"{accelerators[0]} in every role",
        )
    if accelerators and accelerators[0] != GPU_RESOURCE:
        spec["accelerator"] = accelerators[0]
    if any(p.volcano for p in pods):
        queue = next((p.queue for p in pods if p.queue), None)
        spec["scheduling"] = {"scheduler": "volcano", **({"queue": queue} if queue else {})}
    if spec.get("security", {}).get("restricted") is False:
        ctx.note(
            COSMETIC,
            where,
            "the containers ran without paddlegen's restricted securityContext, so "
            "spec.security.restricted is false; delete it for the restricted profile (no "
            "privilege escalation, all capabilities dropped, RuntimeDefault seccomp)",
        )
    for token in sorted({p.default_token for p in pods} - {""}):
        ctx.note(COSMETIC, where, _TOKEN_NOTES[token])


# What the import did with the token pods without automountServiceAccountToken mounted
# (import_pod._default_token), and why.
_UNSET = "automountServiceAccountToken unset: Kubernetes mounts one unless the account says not"
_TOKEN_NOTES = {
    "dropped": "the pods mounted the token of the namespace's default service account "
    f"({_UNSET}); paddlegen's pods mount none, since every pod of the namespace that names no "
    "account shares that one (default-account-token): set automountServiceAccountToken: true "
    "if the program calls the API server",
    "kept": f"the pods mounted their service account's token ({_UNSET}), so "
    "automountServiceAccountToken is true; delete it for paddlegen's default, no token, if "
    "the program does not call the API server",
}


def take_run(spec: Spec, source: dict[str, Any]) -> None:
    """Move the run settings a workload's object carries (base.RUN_KEYS) from ``source``."""
    run = {key: take(source, key) for key in RUN_KEYS if key in source}
    if run:
        spec["run"] = {**spec.get("run", {}), **run}


def take_gang_size(
    obj: dict[str, Any], spec: Spec, ctx: Context, annotations: dict[str, Any] | None = None
) -> None:
    """The Job's annotation that sizes the PodGroup Volcano makes for its pods: in
    ``annotations``, the Job's own (default: the job's, ``ctx.annotations``), of ``obj``."""
    given = ctx.annotations if annotations is None else annotations
    size = str(given.get(GROUP_MIN_MEMBER, ""))
    if "scheduling" in spec and size.isdigit() and int(size) > 0:
        spec["scheduling"]["minAvailable"] = int(given.pop(GROUP_MIN_MEMBER))
        take(obj, "metadata", "annotations", GROUP_MIN_MEMBER)


def take_checkpoint(spec: Spec, attempt: dict[str, Any]) -> None:
    """spec.checkpoint from the checkpoint contract's env (workloads/base.py checkpoint_env),
    where the spec's env starts with it as paddlegen renders it: a folder on a volume that
    the checkpoint-volume rule takes without a word (not an emptyDir, readOnly or hostPath),
    then the attempt from ``attempt`` (the workload's source). Any other form stays env,
    which renders the same."""
    env = spec.get("env", [])
    folder = env[0].get("value") if env and env[0].get("name") == CHECKPOINT_DIR_ENV else None
    if not isinstance(folder, str) or env[1:2] != [{"name": RESTART_ATTEMPT_ENV, **attempt}]:
        return
    volumes = [
        v
        for v in spec.get("volumes", [])
        if folder.startswith(v["mountPath"].rstrip("/") + "/")
        and not {"emptyDir", "hostPath"} & v.keys()
        and not v.get("readOnly")
    ]
    if not volumes:
        return
    volume = max(volumes, key=lambda v: len(v["mountPath"]))
    path = folder[len(volume["mountPath"].rstrip("/")) + 1 :]
    if not path or path.endswith("/") or {".", ".."} & set(path.split("/")):
        return  # not a folder the spec can name (its schema's relativePath)
    del env[:2]
    if not env:
        spec.pop("env")
    spec["checkpoint"] = {"volume": volume["name"], "path": path}
    without_checkpoint_override(spec)  # an LLM CLI's output_dir, which the checkpoint gives
    # With a checkpoint the pods' grace defaults to CHECKPOINT_GRACE (spec/model.py), without
    # to Kubernetes' (the import leaves that one out): whichever the pods had stays theirs.
    grace = spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE)
    if grace == CHECKPOINT_GRACE:
        spec.pop("terminationGracePeriodSeconds", None)
    else:
        spec["terminationGracePeriodSeconds"] = grace


def scheduling_policy(
    spec: Spec, policy: dict[str, Any], ctx: Context, where: str, field: str
) -> None:
    """The operators' schedulingPolicy: the Volcano gang (its minResources paddlegen derives,
    as for a PodGroup: the importer compares them), when a pod names Volcano.

    Pods that name no scheduler run on the default one unless the operator was started to
    gang every job (PaddleFlow --scheduling=volcano, training-operator
    --gang-scheduler-name=volcano): which one runs them is the cluster's, not the input's. A
    spec with Volcano would have the pods name it, and wait where it is not installed, so the
    import never switches scheduler: the policy is lossy."""
    if spec.get("scheduling", {}).get("scheduler") != "volcano":
        ctx.note(
            LOSSY,
            where,
            f"{field} {json.dumps(policy)} is not carried over: the pods name no scheduler, "
            "so they run on the default scheduler unless the operator gang-schedules every "
            "job; set spec.scheduling.scheduler: volcano (the pods then name Volcano) if this "
            "job needs its gang",
        )
        policy.clear()
        return
    if "minResources" in policy:
        ctx.gang_min_resources = take(policy, "minResources")
        ctx.gang_at = ("spec", *field.split("."), "minResources")
    scheduling = spec.setdefault("scheduling", {"scheduler": "volcano"})
    for theirs, mine in (
        ("minAvailable", "minAvailable"),
        ("queue", "queue"),
        ("priorityClass", "priorityClassName"),
    ):
        if theirs in policy:
            scheduling[mine] = take(policy, theirs)
