"""`paddlegen import --to kubeflow-paddlejob`: a PaddleFlow PaddleJob, read back by its own
importer, becomes a `kubeflow-paddlejob` spec. The roles stay (ps renders as the Master
replica type, worker as Worker); what the training-operator does otherwise is a note: lossy
where the job would run differently (heter pods, elastic mode, the host network, the operator's
env for a program that reads it), cosmetic where it would run the same."""

from __future__ import annotations

from typing import Any

from paddlegen.spec.model import replicas
from paddlegen.workloads.base import Spec
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context
from paddlegen.workloads.shared.operators import PADDLEFLOW_ENV

WORKLOAD = "kubeflow-paddlejob"
# PaddleFlow's cleanPodPolicy -> the training-operator's runPolicy.cleanPodPolicy, where one
# means the other (the operator keeps every pod under None, deletes all under All).
CLEAN_POD_POLICY = {"Always": "All", "Never": "None"}
# What the training-operator v1.9.0 gives the pods instead (pkg/controller.v1/paddlepaddle/
# envvar.go:40-141, setPodEnv): Paddle's launcher contract.
_KUBEFLOW_ENV = (
    "PADDLE_MASTER, PADDLE_NNODES, PADDLE_JOB_ID, and PADDLE_SERVER_NUM or PADDLE_TRAINER_NUM"
)
LAUNCHER = "paddle.distributed.launch"


def from_paddleflow(spec: Spec, ctx: Context, where: str) -> Spec:
    """``spec`` (a ``paddlejob`` spec ``where`` was read into) as a ``kubeflow-paddlejob``
    spec; every difference noted on ``where``."""
    out: Spec = {"workload": WORKLOAD}
    out.update((k, v) for k, v in spec.items() if k not in ("workload", "paddlejob"))
    launched = _runs_the_launcher(out)
    ps = out.get("ps")
    if ps is not None:
        count = replicas(ps)
        ctx.note(
            COSMETIC if launched else LOSSY,
            where,
            f"the {count} parameter server{'s' if count != 1 else ''} (ps) become the "
            f"Master replica type ({count} pod{'s' if count != 1 else ''}): the "
            "training-operator runs PS mode, telling Paddle's launcher to run a server on each "
            "Master (PADDLE_SERVER_NUM=1) and a trainer on each Worker (PADDLE_TRAINER_NUM=1), "
            "with master-0 as every pod's PADDLE_MASTER"
            + ("" if launched else f"; the pods must start the launcher (python3 -m {LAUNCHER})"),
            at=("spec", "ps"),
        )
    heter = out.pop("heter", None)
    if heter is not None:
        count = replicas(heter)
        ctx.note(
            LOSSY,
            where,
            f"dropped {count} heter pod{'s' if count != 1 else ''}: the Kubeflow PaddleJob "
            "has only Master and Worker replicas",
            at=("spec", "heter"),
        )
    _settings(out, spec.get("paddlejob", {}), ctx, where)
    names = ", ".join(sorted(PADDLEFLOW_ENV))
    ctx.note(
        COSMETIC if launched else LOSSY,
        where,
        f"PaddleFlow's env ({names}) is not set: the training-operator gives Paddle's launcher "
        f"its contract instead ({_KUBEFLOW_ENV})"
        + (
            ", which the launcher reads"
            if launched
            else "; a program that reads PaddleFlow's names itself must run under Paddle's "
            f"launcher (python3 -m {LAUNCHER})"
        ),
    )
    return out


def _settings(out: Spec, settings: dict[str, Any], ctx: Context, where: str) -> None:
    policy = settings.get("cleanPodPolicy")
    if policy in CLEAN_POD_POLICY:
        out["kubeflow"] = {"cleanPodPolicy": CLEAN_POD_POLICY[policy]}
    elif policy is not None:
        ctx.note(
            COSMETIC,
            where,
            f"cleanPodPolicy {policy} not carried over: the training-operator has no "
            "policy by outcome; it keeps the finished pods (they hold no resources) until the "
            "job is deleted (spec.kubeflow.cleanPodPolicy: All deletes them)",
            at=("spec", "cleanPodPolicy"),
        )
    if "withGloo" in settings:
        ctx.drop_notes(("spec", "withGloo"))  # the paddlejob importer's: no longer rendered
        ctx.note(
            COSMETIC,
            where,
            f"withGloo {settings['withGloo']} not carried over: the Kubeflow PaddleJob has no "
            "such setting",
            at=("spec", "withGloo"),
        )
    intranet = settings.get("intranet")
    if intranet is not None:
        ctx.note(
            LOSSY if intranet == "HostNetwork" else COSMETIC,
            where,
            f"intranet {intranet} not carried over: the pods use the pod network and find "
            "master-0 by the Service the training-operator makes for each pod",
            at=("spec", "intranet"),
        )
    if "elastic" in settings:
        ctx.note(
            LOSSY,
            where,
            f"elastic {settings['elastic']} not carried over: paddlegen's Kubeflow PaddleJob "
            "runs a fixed number of pods",
            at=("spec", "elastic"),
        )


def _runs_the_launcher(out: Spec) -> bool:
    """Whether every pod's command or args start Paddle's launcher."""
    bodies = [out, *(out[role] for role in ("ps", "worker") if role in out)]
    words = [str(w) for body in bodies for key in ("command", "args") for w in body.get(key, [])]
    return any(LAUNCHER in w for w in words)
