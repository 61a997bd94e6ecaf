"""Workload `trainjob`'s importer: a Kubeflow Trainer TrainJob back to a spec.

What paddlegen renders for trainjob (workloads/trainjob) reads back without a note: the
trainer's image, command (after the master wrapper), args, env, numNodes and resourcesPerNode,
paddlegen's runtime patch (manager `paddlegen/spec`), whose pod template is read like any
other workload's (workloads/import_pod.py), and with group restarts the job's own
TrainingRuntime (trainjob/import_runtime.py). Whatever a TrainJob holds beyond that is a note at
the field, line and column: a runtime other than paddlegen's four, a patch of another manager,
a field Trainer v2.3.0 has and the spec does not (numProcPerNode, initializer, suspend, ...).

Trainer's sources cited are github.com/kubeflow/trainer at v2.3.0."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.spec.scheduling import KUEUE_QUEUE_LABEL
from paddlegen.workloads.base import QUEUE_NAME, Spec
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_pod import Pod, pod
from paddlegen.workloads.import_positions import FieldPath
from paddlegen.workloads.import_spec import assemble, take_checkpoint, take_env
from paddlegen.workloads.shared import jobset as jobset_restarts
from paddlegen.workloads.shared.import_launcher import is_queued, unwrap
from paddlegen.workloads.shared.launcher import LAUNCHER, unwrapped
from paddlegen.workloads.trainjob.carried import CONTRACT_ENV, UNSUPPORTED
from paddlegen.workloads.trainjob.import_runtime import own_runtime, read_own_runtime
from paddlegen.workloads.trainjob.names import MANAGER, NODE, RUNTIME, runtime_of
from paddlegen.workloads.trainjob.runtime import NAMESPACED_KIND

# The manager of Kueue's runtime patch (pkg/controller/jobs/trainjob/trainjob_controller.go:76
# at v0.19.2).
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
# paddlegen's runtimes: whether each gang-schedules with Volcano, and is a queued job's.
RUNTIMES = {
    runtime_of(volcano=volcano, queued=queued): (volcano, queued)
    for volcano in (False, True)
    for queued in (False, True)
}
# What runtimeRef's apiGroup and kind default to (trainjob_types.go:165-177), and what
# paddlegen's TrainJobs say.
RUNTIME_REF = {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}
# The trainer's fields and the training container's field each becomes.
_TRAINER_FIELDS = {
    "image": "image",
    "command": "command",
    "args": "args",
    "env": "env",
    "resourcesPerNode": "resources",
}
_NNODES = "PADDLE_NNODES"
_PATCHES = ("spec", "runtimePatches")
# The replicated job's pod template, inside a runtime patch.
_NODE_TEMPLATE = ("template", "spec", "template")
# The fields of UNSUPPORTED that a pod spec holds (the others: a container).
_POD_FIELDS = ("priorityClassName", "runtimeClassName", "topologySpreadConstraints",
               "initContainers", "sidecars")  # fmt: skip


def trainjob(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A TrainJob (trainer.kubeflow.org/v1alpha1): a `trainjob` spec."""
    body = obj.setdefault("spec", {})
    given = own_runtime(obj, ctx)
    runtime = _runtime(body, ctx, where, own=given is not None)
    own = None if given is None else read_own_runtime(given, ctx, queued=is_queued(obj))
    template, template_at, jobset = _own_patch(body, ctx, where)
    trainer = body.get("trainer", {})
    replicas = int(take(body, "trainer", "numNodes", default=1))
    counted = _trainer_env(trainer, replicas, ctx, where)
    container, container_at = _node_container(template)
    moved, aside = _move_trainer(trainer, container)
    p = pod(template, ctx, where, training=NODE, whole=False, at=template_at)
    _give_back(p, moved, aside, trainer)
    if not trainer:
        body.pop("trainer", None)
    ours = own is not None or runtime in RUNTIMES  # paddlegen's, or a job's own
    if not ours:
        _other_runtime(p, runtime, counted, ctx, where)
    elif own is None:
        _queued_runtime(obj, runtime, ctx, where)
    _command(p, runtime, ours, ctx, where)
    _unsupported(p, template_at, container_at, ctx, where)
    if p.restart_policy not in (None, "Never"):
        ctx.note(
            LOSSY,
            where,
            f"restartPolicy {p.restart_policy} becomes Never, the runtime's: a rank restarted "
            "in place cannot rejoin the others",
            (*template_at, "spec", "restartPolicy"),
        )
    p.restart_policy = None  # the runtime's: Never
    p.volcano, p.queue = False, None  # the runtime gangs the pods, not the pod template
    spec = assemble("trainjob", {"worker": (replicas, p)}, ctx, where)
    # Volcano's queue sits on the JobSet template (workloads/trainjob): with paddlegen's
    # Volcano runtime, or another that the spec then gangs too. Anywhere else it stays, listed.
    queues = jobset.get("metadata", {}).get("annotations", {})
    if own is not None:
        volcano = own.volcano
    else:
        volcano = RUNTIMES[runtime][0] if runtime in RUNTIMES else QUEUE_NAME in queues
    if volcano:
        queue = take(jobset, "metadata", "annotations", QUEUE_NAME)
        spec["scheduling"] = {"scheduler": "volcano", **({"queue": queue} if queue else {})}
    if not ours:
        spec["trainjob"] = {"runtime": runtime}
    if own is not None and own.restarts:
        spec["run"] = {"restarts": own.restarts}
    if own is not None:
        spec.update(own.pod)
    # every pod of a TrainJob's JobSet reads its attempt from the JobSet, 0 without restarts
    take_checkpoint(spec, jobset_restarts.ATTEMPT_ENV_SOURCE)
    # each attempt's deadline, with restarts (runtime.attempt_deadline), else the TrainJob's
    if own is not None and own.deadline is not None:
        spec.setdefault("run", {})["activeDeadlineSeconds"] = own.deadline
    elif "activeDeadlineSeconds" in body:
        spec.setdefault("run", {})["activeDeadlineSeconds"] = take(body, "activeDeadlineSeconds")
    return spec


def _runtime(body: dict[str, Any], ctx: Context, where: str, *, own: bool) -> str:
    """The runtime the TrainJob names. paddlegen's TrainJobs name a ClusterTrainingRuntime, or
    with ``own`` the job's own TrainingRuntime (in the input, import_runtime.py); one of
    another kind or group is noted (the spec names the cluster's runtime of that name)."""
    wanted = {**RUNTIME_REF, "kind": NAMESPACED_KIND} if own else RUNTIME_REF
    for key, ours in wanted.items():
        given = take(body, "runtimeRef", key, default=ours)
        if given != ours:
            ctx.note(
                LOSSY,
                where,
                f"runtimeRef.{key} {json.dumps(given)} becomes {json.dumps(ours)}: paddlegen's "
                f"TrainJobs reference a ClusterTrainingRuntime (spec.trainjob.runtime names it)",
                ("spec", "runtimeRef", key),
            )
    name = str(take(body, "runtimeRef", "name", default=""))
    if not name:
        ctx.note(
            LOSSY,
            where,
            f"no runtimeRef.name: the spec references paddlegen's runtime {RUNTIME}",
            ("spec", "runtimeRef"),
        )
        return RUNTIME
    return name


def _other_runtime(p: Pod, runtime: str, counted: bool, ctx: Context, where: str) -> None:
    """A runtime not paddlegen's: the spec names it (spec.trainjob.runtime) and renders the
    launcher's contract for it, as for a copy of paddlegen's under another name. A TrainJob
    without that contract (no PADDLE_NNODES, no master wrapper: a torch or jax one, say)
    would run otherwise: a warning at the name says so, beside the notes on each field."""
    command = p.role.get("command")
    wrapped = command is None or unwrapped(command) is not None
    if wrapped and counted:
        return
    ctx.note(
        LOSSY,
        where,
        f"runtime {runtime} is not paddlegen's ({', '.join(RUNTIMES)}), and the TrainJob "
        "does not run Paddle's launcher contract on it (PADDLE_NNODES, the master wrapper): "
        f"the spec names it (spec.trainjob.runtime) and renders that contract, which runs "
        f"only on a runtime that carries it, as paddlegen's does (`paddlegen runtime`)",
        ("spec", "runtimeRef", "name"),
    )


def _queued_runtime(obj: dict[str, Any], runtime: str, ctx: Context, where: str) -> None:
    """paddlegen's TrainJob references a queued runtime exactly when Kueue queues it (the
    label that becomes scheduling.kueue): one the other way round is noted, as the spec's
    render picks the other."""
    queued = is_queued(obj)
    volcano, for_queued = RUNTIMES[runtime]
    if for_queued != queued:
        ctx.note(
            LOSSY,
            where,
            f"runtime {runtime} becomes {runtime_of(volcano=volcano, queued=queued)}: "
            f"paddlegen's TrainJobs reference a queued runtime (one whose pod failure policy "
            f"lets Kueue preempt) exactly when Kueue queues them (label {KUEUE_QUEUE_LABEL})",
            ("spec", "runtimeRef", "name"),
        )


def _own_patch(
    body: dict[str, Any], ctx: Context, where: str
) -> tuple[dict[str, Any], FieldPath, dict[str, Any]]:
    """paddlegen's runtime patch: the `node` pod template (in place, or a new one), where it
    stands, and the JobSet template. Every patch of another manager is noted whole and
    dropped."""
    patches = body.get("runtimePatches", [])
    found: dict[str, Any] = {}
    index = 0
    for i, patch in reversed(list(enumerate(patches))):
        manager = patch.get("manager")
        if manager == MANAGER and not found:
            found, index = patch, i
            continue
        if manager == KUEUE_MANAGER:
            # Kueue v0.19.2's webhook appends its patch to every TrainJob it is shown, queued
            # or not (pkg/controller/jobs/trainjob/trainjob_webhook.go:91-102), and fills it
            # on admission: on a TrainJob read back from a cluster with Kueue, it is Kueue's.
            ctx.note(
                COSMETIC,
                where,
                f"runtimePatches[{i}] (manager {KUEUE_MANAGER}) is Kueue's, which its webhook "
                "adds to every TrainJob: not carried over (scheduling.kueue queues the job)",
                (*_PATCHES, i, "manager"),
            )
        else:
            ctx.note(
                LOSSY,
                where,
                f"runtimePatches[{i}] (manager {json.dumps(manager)}) is not carried over: the "
                f"spec renders one patch, paddlegen's (manager {MANAGER}); another manager's "
                "is that manager's to write (trainjob_types.go:294-297)",
                (*_PATCHES, i, "manager"),
            )
        patches.pop(i)
    if not found:
        if "runtimePatches" in body and not patches:
            body.pop("runtimePatches")
        return {}, (), {}
    take(found, "manager")
    take(found, "time")  # the webhook's, on every write (trainjob_types.go:303-307)
    jobset = found.get("trainingRuntimeSpec", {}).get("template", {})
    jobs = jobset.get("spec", {}).get("replicatedJobs", [])
    at = (*_PATCHES, index, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
    for j, job in enumerate(jobs):
        if job.get("name") == NODE:
            take(job, "name")
            template = job
            for key in _NODE_TEMPLATE:
                template = template.setdefault(key, {})
            return template, (*at, j, *_NODE_TEMPLATE), jobset
    return {}, (), jobset


def _trainer_env(trainer: dict[str, Any], replicas: int, ctx: Context, where: str) -> bool:
    """The trainer's env less the contract's: PADDLE_NNODES, which the spec derives from
    numNodes, and the runtime's own (a spec may not set them: rule collective-env). Whether
    it gave PADDLE_NNODES."""
    env = list(trainer.get("env", []))
    if not env:
        trainer.pop("env", None)  # none given, or an empty list
    for i, entry in enumerate(env):
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in CONTRACT_ENV:
            continue
        take_env(trainer, name)
        at = ("spec", "trainer", "env", i)
        if name != _NNODES:
            ctx.note(
                LOSSY,
                where,
                f"env {name} is not carried over: paddlegen's runtime sets it (the launcher's "
                f"contract, {CONTRACT_ENV[name]})",
                at,
            )
        elif entry != {"name": name, "value": str(replicas)}:
            ctx.note(
                LOSSY,
                where,
                f"env {name} {json.dumps(entry.get('value', entry.get('valueFrom')))} becomes "
                f"{json.dumps(str(replicas))} (numNodes)",
                at,
            )
    counted = any(e.get("name") == _NNODES for e in env if isinstance(e, dict))
    if not counted:
        ctx.note(
            LOSSY,
            where,
            f"env {_NNODES} was not set; paddlegen sets {json.dumps(str(replicas))} (numNodes: "
            "Trainer's plain ML policy sets no node count)",
            ("spec", "trainer"),
        )
    return counted


def _node_container(template: dict[str, Any]) -> tuple[dict[str, Any], FieldPath]:
    """The patch's container `node` (added first if it has none), and where it stands."""
    containers = template.setdefault("spec", {}).setdefault("containers", [])
    for i, container in enumerate(containers):
        if container.get("name") == NODE:
            return container, ("spec", "containers", i)
    containers.insert(0, {"name": NODE})
    return containers[0], ()


def _move_trainer(
    trainer: dict[str, Any], container: dict[str, Any]
) -> tuple[dict[str, str], dict[str, Any]]:
    """The trainer's fields into the container, as a pod template holds them: which moved
    (container field -> trainer field), and the container's own values they displaced."""
    moved: dict[str, str] = {}
    aside: dict[str, Any] = {}
    for theirs, mine in _TRAINER_FIELDS.items():
        if theirs in trainer:
            if mine in container:
                aside[mine] = container.pop(mine)
            container[mine] = trainer.pop(theirs)
            moved[mine] = theirs
    return moved, aside


def _give_back(
    p: Pod, moved: dict[str, str], aside: dict[str, Any], trainer: dict[str, Any]
) -> None:
    """What the spec did not take of the moved fields goes back to the trainer, and the
    container's own displaced values back to it, so that both are listed where they were."""
    for mine, theirs in moved.items():
        if mine in p.container:
            trainer[theirs] = p.container.pop(mine)
    p.container.update(aside)


def _command(p: Pod, runtime: str, ours: bool, ctx: Context, where: str) -> None:
    """The spec's command: the trainer's without paddlegen's wrapper. Without one the
    runtime's runs, which in paddlegen's runtimes (``ours``) is the wrapper and the launcher."""
    if "command" in p.role:
        unwrap(p.role, ctx, where, ("spec", "trainer", "command"))
    elif not ours:
        ctx.note(
            LOSSY,
            where,
            f"no command: runtime {runtime}'s own ran; the TrainJob now runs Paddle's launcher "
            "after paddlegen's master wrapper, " + " ".join(LAUNCHER),
            ("spec", "trainer"),
        )


def _unsupported(
    p: Pod, template_at: FieldPath, container_at: FieldPath, ctx: Context, where: str
) -> None:
    """What a TrainJob cannot carry (workloads/trainjob UNSUPPORTED) leaves the spec,
    which would be refused with it, with a note where the input had it."""
    for key, (_, why) in UNSUPPORTED.items():
        if key not in p.role:
            continue
        p.role.pop(key)
        at: FieldPath = ()
        if key in _POD_FIELDS and template_at:
            at = (*template_at, "spec", "initContainers" if key == "sidecars" else key)
        elif template_at and container_at:
            at = (*template_at, *container_at, key)
        ctx.note(LOSSY, where, f"{key} is not carried over: {why.partition(': ')[2]}", at)
