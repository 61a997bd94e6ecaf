"""`paddlegen import --to collective-job`: an operator's PaddleJob, read back by its own
importer, becomes a `collective-job` spec. Whatever the Indexed Job cannot carry is a note:
lossy where the job would run differently (parameter servers, heter pods, elastic mode, the
host network, in-place restarts, the operator's env for a program that reads it), cosmetic
where it would run the same (the operator's clean-up of finished pods, its Gloo and intranet
settings where nothing depends on them)."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.spec.model import replicas
from paddlegen.workloads.base import Spec
from paddlegen.workloads.collective_job.contract import CONTRACT_ENV
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context
from paddlegen.workloads.shared.launcher import LAUNCHER
from paddlegen.workloads.shared.operators import JOB_BACKOFF_LIMIT, KUBEFLOW_ENV, PADDLEFLOW_ENV

WORKLOAD = "collective-job"
# The workloads converted, and where their roles sit in the input object (for the notes).
SOURCES: dict[str, dict[str, tuple[str, ...]]] = {
    "paddlejob": {"ps": ("spec", "ps"), "heter": ("spec", "heter"), "worker": ("spec", "worker")},
    "kubeflow-paddlejob": {
        "ps": ("spec", "paddleReplicaSpecs", "Master"),
        "worker": ("spec", "paddleReplicaSpecs", "Worker"),
    },
}
# Env the pods of a collective-job get from paddlegen, which a spec may not set (rule
# collective-env).
OWN_ENV = {
    *CONTRACT_ENV,
    "PADDLE_TRAINER_ENDPOINTS",
    "DISTRIBUTED_TRAINER_ENDPOINTS",
}
_CONTRACT = ", ".join(CONTRACT_ENV)


def from_operator(spec: Spec, ctx: Context, where: str) -> Spec:
    """``spec`` (a ``paddlejob`` or ``kubeflow-paddlejob`` spec ``where`` was read into) as a
    ``collective-job`` spec; every difference noted on ``where``."""
    source = spec["workload"]
    paths = SOURCES[source]
    kubeflow = source == "kubeflow-paddlejob"
    out: Spec = {"workload": WORKLOAD}
    out.update((k, v) for k, v in spec.items() if k != "workload")
    total = sum(replicas(out.get(role, {})) for role in paths if role in out)

    ps = out.pop("ps", None)
    if ps is not None:
        count = replicas(ps)
        what = (
            f"the Master replica type ({count} pod{'s' if count != 1 else ''}), which the "
            "operator runs as parameter servers (PS mode)"
            if kubeflow
            else f"{count} parameter server{'s' if count != 1 else ''} (ps)"
        )
        ctx.note(
            LOSSY,
            where,
            f"dropped {what}: {WORKLOAD} has no parameter servers, every pod is a rank of a "
            "collective (data-parallel) job; a parameter-server program must be made a "
            "collective one (fleet.init(is_collective=True)), or stay on the operator",
            at=paths["ps"],
        )
    heter = out.pop("heter", None)
    if heter is not None:
        count = replicas(heter)
        ctx.note(
            LOSSY,
            where,
            f"dropped {count} heter pod{'s' if count != 1 else ''}: heterogeneous training is "
            f"a form of PS mode, which {WORKLOAD} has not",
            at=paths["heter"],
        )
    out.setdefault("worker", {"replicas": 1})
    ranks = replicas(out["worker"])

    settings = out.pop("kubeflow" if kubeflow else "paddlejob", {})
    if kubeflow:
        _kubeflow_settings(out, settings, ctx, where)
    else:
        _paddleflow_settings(settings, ctx, where, ps is not None)
    _restarts(out, ctx, where, kubeflow)
    _env(out, ctx, where, source)
    _command(out, ctx, where)
    _gang(out, ctx, where, total, ranks)
    return out


def _paddleflow_settings(settings: dict[str, Any], ctx: Context, where: str, ps: bool) -> None:
    if "cleanPodPolicy" in settings:
        ctx.note(
            COSMETIC,
            where,
            f"cleanPodPolicy {settings['cleanPodPolicy']} not carried over: a Job keeps its "
            "finished pods (they hold no resources) until it is deleted; "
            "run.ttlSecondsAfterFinished deletes both",
            at=("spec", "cleanPodPolicy"),
        )
    if "withGloo" in settings:
        ctx.drop_notes(("spec", "withGloo"))  # the paddlejob importer's: no longer rendered
        ctx.note(
            COSMETIC,
            where,
            f"withGloo {settings['withGloo']} not carried over: Gloo served the parameter "
            + ("servers, dropped above" if ps else "servers, and there were none")
            + "; Paddle's launcher brings its own rendezvous",
            at=("spec", "withGloo"),
        )
    intranet = settings.get("intranet")
    if intranet == "HostNetwork":
        ctx.note(
            LOSSY,
            where,
            "intranet HostNetwork not carried over: the pods ran on their nodes' network; "
            f"{WORKLOAD}'s pods use the pod network and find rank 0 by the headless Service",
            at=("spec", "intranet"),
        )
    elif intranet is not None:
        ctx.note(
            COSMETIC,
            where,
            f"intranet {intranet} not carried over: {WORKLOAD}'s pods find rank 0 by its name "
            "under the headless Service (<job>-0.<job>)",
            at=("spec", "intranet"),
        )
    if "elastic" in settings:
        ctx.note(
            LOSSY,
            where,
            f"elastic {settings['elastic']} not carried over: {WORKLOAD} runs a fixed number "
            "of ranks (worker.replicas), and one failed rank fails the job",
            at=("spec", "elastic"),
        )


def _kubeflow_settings(out: Spec, settings: dict[str, Any], ctx: Context, where: str) -> None:
    if "port" in settings:
        # The operator's rendezvous port becomes the launcher master's: the same role.
        out["collective"] = {"port": settings["port"]}
    if "cleanPodPolicy" in settings:
        ctx.note(
            COSMETIC,
            where,
            f"runPolicy.cleanPodPolicy {settings['cleanPodPolicy']} not carried over: a Job "
            "keeps its finished pods (they hold no resources) until it is deleted; "
            "run.ttlSecondsAfterFinished deletes both",
            at=("spec", "runPolicy", "cleanPodPolicy"),
        )


def _restarts(out: Spec, ctx: Context, where: str, kubeflow: bool) -> None:
    run = out.get("run", {})
    policy = run.pop("restartPolicy", None)
    if "run" in out and not run:
        del out["run"]
    if kubeflow:  # the kubeflow-paddlejob importer's notes: what becomes of it is said here
        for replica in ("Master", "Worker"):
            ctx.drop_notes(("spec", "paddleReplicaSpecs", replica, "restartPolicy"))
    if kubeflow and policy in (None, "OnFailure", "Always"):
        ctx.note(
            LOSSY,
            where,
            f"restartPolicy {policy or 'OnFailure'} not carried over: the operator restarted "
            "a failed replica in place (up to runPolicy.backoffLimit, default "
            f"{JOB_BACKOFF_LIMIT}); {WORKLOAD}'s pods never restart, and "
            "one failed rank fails the whole job (a new run starts every rank again)",
            at=("spec", "paddleReplicaSpecs", "Worker", "restartPolicy"),
        )
    elif policy not in (None, "Never"):
        ctx.note(
            LOSSY,
            where,
            f"restartPolicy {policy} not carried over: {WORKLOAD}'s pods never restart, and "
            "one failed rank fails the whole job",
        )


def _env(out: Spec, ctx: Context, where: str, source: str) -> None:
    """The operator's env is gone; the spec's own entries that collective-job sets go too."""
    for body in (out, out["worker"]):
        env = body.get("env", [])
        for entry in [e for e in env if e.get("name") in OWN_ENV]:
            env.remove(entry)
            ctx.note(
                LOSSY,
                where,
                f"env {entry['name']} = {json.dumps(entry.get('value', entry.get('valueFrom')))} "
                f"dropped: {WORKLOAD} sets it itself",
            )
        if "env" in body and not env:
            del body["env"]
    operator = PADDLEFLOW_ENV if source == "paddlejob" else KUBEFLOW_ENV
    names = ", ".join(sorted(n for n in operator if n not in CONTRACT_ENV))
    launched = _runs_the_launcher(out)
    ctx.note(
        COSMETIC if launched else LOSSY,
        where,
        f"the operator's env ({names}) is not set: {WORKLOAD} gives Paddle's launcher its "
        f"contract instead ({_CONTRACT})"
        + (
            ", which the launcher reads"
            if launched
            else "; a program that reads the operator's names itself must read these, or run "
            "under Paddle's launcher (python3 -m paddle.distributed.launch)"
        ),
    )


def _runs_the_launcher(out: Spec) -> bool:
    words = [
        *out.get("command", []),
        *out.get("args", []),
        *out["worker"].get("command", []),
        *out["worker"].get("args", []),
    ]
    return not (out.get("command") or out["worker"].get("command")) or any(
        "paddle.distributed.launch" in str(w) for w in words
    )


def _command(out: Spec, ctx: Context, where: str) -> None:
    if out.get("command") or out["worker"].get("command"):
        return
    args = out.get("args") or out["worker"].get("args")
    ctx.note(
        LOSSY,
        where,
        "no command: the operator's pods ran the image's entrypoint; "
        + (
            f"{WORKLOAD}'s run Paddle's launcher ({' '.join(LAUNCHER)}) on "
            f"args {json.dumps(args)} instead (set command to keep the entrypoint)"
            if args
            else f"{WORKLOAD}'s need the training script as args (Paddle's launcher runs it)"
        ),
    )


def _gang(out: Spec, ctx: Context, where: str, total: int, ranks: int) -> None:
    """The gang counted the pods dropped; the operator's minResources is Volcano's to derive."""
    if ctx.gang_min_resources is not None:
        ctx.gang_min_resources = None
        ctx.note(
            COSMETIC,
            where,
            "schedulingPolicy.minResources not carried over: Volcano makes the Job's "
            "PodGroup itself, from its pods",
        )
    scheduling = out.get("scheduling", {})
    wanted = scheduling.get("minAvailable")
    if wanted is not None and wanted > ranks:
        del scheduling["minAvailable"]
        ctx.note(
            COSMETIC if wanted == total else LOSSY,
            where,
            f"minAvailable {wanted} counted the pods dropped: the gang is now the job's "
            f"{ranks} rank{'s' if ranks != 1 else ''}, all of which a collective job needs",
        )
