"""The rules of workload `distributed-job`: what its image's start script needs."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from paddlegen.spec.loader import FieldPath
from paddlegen.spec.rule import (
    Context,
    Finding,
    SpecRule,
    WorkloadRules,
    mount_point,
    worker_replicas,
)
from paddlegen.workloads.distributed_job.settings import DISTRIBUTED_DEFAULTS


def _roles(ctx: Context) -> Iterator[Finding]:
    for role in ("ps", "heter"):
        if role in ctx.spec:
            yield ctx.finding(
                ("spec", role),
                f"workload 'distributed-job' has no '{role}' role: "
                "every pod runs both a pserver and a trainer",
                "set worker.replicas to the number of pods, or use workload "
                "'paddlejob' for separate pserver pods",
                key=True,
            )


DISTRIBUTED_ROLES = SpecRule(
    "distributed-roles",
    "`distributed-job` has no `ps` or `heter` role",
    explanation=(
        "`distributed-job` runs one set of identical trainer pods. A `ps` or `heter` role has no "
        "place in it; workload `paddlejob` or `kubeflow-paddlejob` runs parameter servers."
    ),
    severity="error",
    silenceable=True,
    check=_roles,
)


# Env the distributed-job image reads and the spec field paddlegen derives each from.
_DISTRIBUTED_ENV = {
    "JOB_NAME": "metadata.name",
    "JOB_PATH": "distributed.volume (its mountPath)",
    "JOB_NAMESPACE": "the pod's namespace",
    "TRAIN_CONFIG_DIR": "distributed.trainConfigDir",
    "CONF_PADDLE_NIC": "distributed.nic",
    "CONF_PADDLE_PORT": "distributed.port",
    "CONF_PADDLE_PORTS_NUM": "distributed.portsNum",
    "CONF_PADDLE_PORTS_NUM_SPARSE": "distributed.portsNumSparse",
    "CONF_PADDLE_GRADIENT_NUM": "worker.replicas",
    "TRAINER_COUNT": "distributed.trainerCount",
}


# What the image's start script cannot run without (it runs under `set -u`).
_DISTRIBUTED_REQUIRED = {
    "volume": ("JOB_PATH", "the spec.volumes entry holding the data, e.g. volume: data"),
    "trainConfigDir": (
        "TRAIN_CONFIG_DIR",
        "the folder under <JOB_PATH>/<job name> holding the "
        "trainer config, e.g. trainConfigDir: quick_start",
    ),
}


_MAX_PORT = 65535


def _required(ctx: Context) -> Iterator[Finding]:
    settings = ctx.spec.get("distributed", {})
    where: FieldPath = ("spec", "distributed") if "distributed" in ctx.spec else ("spec",)
    for key, (env, hint) in _DISTRIBUTED_REQUIRED.items():
        if key not in settings:
            yield ctx.finding(
                where,
                f"workload 'distributed-job' needs distributed.{key}: the "
                f"image's start script stops when {env} is unset",
                hint,
                key=True,
            )


DISTRIBUTED_REQUIRED = SpecRule(
    "distributed-required",
    "`distributed-job` has `distributed.volume` and `trainConfigDir`",
    explanation=(
        "The distributed image reads its training config from a folder (`trainConfigDir`) on a "
        "volume (`distributed.volume`). Without both paddlegen cannot render the job, so this rule "
        "cannot be silenced."
    ),
    severity="error",
    silenceable=False,
    check=_required,
)


def _ports(ctx: Context) -> Iterator[Finding]:
    settings = ctx.spec.get("distributed", {})
    where: FieldPath = ("spec", "distributed") if "distributed" in ctx.spec else ("spec",)
    port = settings.get("port", DISTRIBUTED_DEFAULTS.port)
    count = settings.get("portsNum", DISTRIBUTED_DEFAULTS.portsNum) + settings.get(
        "portsNumSparse", DISTRIBUTED_DEFAULTS.portsNumSparse
    )
    if port + count - 1 > _MAX_PORT:
        yield ctx.finding(
            (*where, "port") if "port" in settings else where,
            f"ports {port}..{port + count - 1} (port + portsNum + portsNumSparse - 1)"
            f" go beyond {_MAX_PORT}",
            f"use a port of at most {_MAX_PORT - count + 1}",
        )


DISTRIBUTED_PORTS = SpecRule(
    "distributed-ports",
    "`distributed-job`'s ports stay below 65536",
    explanation=(
        "`distributed-job` gives each pod a range of ports from its base port. A range that ends "
        "past 65535 names ports that do not exist, and the API server refuses the pods."
    ),
    severity="error",
    silenceable=True,
    check=_ports,
)


def _command(ctx: Context) -> Iterator[Finding]:
    settings = ctx.spec.get("distributed", {})
    if "command" in settings:
        for section in ("spec", "worker"):
            body = ctx.spec if section == "spec" else ctx.spec.get("worker", {})
            if "command" in body:
                yield ctx.finding(
                    ("spec", "distributed", "command"),
                    f"distributed.command and {section}.command both set the start command",
                    "keep one of them",
                    key=True,
                )


DISTRIBUTED_COMMAND = SpecRule(
    "distributed-command",
    "one start command, not `distributed.command` and another",
    explanation=(
        "The distributed image starts from `distributed.command`. A spec that also gives `command` "
        "would give the pods two start commands, of which only one could run."
    ),
    severity="error",
    silenceable=True,
    check=_command,
)


def _env(ctx: Context) -> Iterator[Finding]:
    for base in (("spec",), ("spec", "worker")):
        body = ctx.spec if len(base) == 1 else ctx.spec.get("worker", {})
        for i, entry in enumerate(body.get("env", [])):
            source = _DISTRIBUTED_ENV.get(entry["name"])
            if source:
                yield ctx.finding(
                    (*base, "env", i, "name"),
                    f"env '{entry['name']}' is set by workload 'distributed-job' from {source}",
                    "remove it here",
                )


DISTRIBUTED_ENV = SpecRule(
    "distributed-env",
    "no env that `distributed-job` sets itself",
    explanation=(
        "`distributed-job` sets env of its own that its image reads to find the job's pods and "
        "ports. A spec entry of the same name would override it, and the ranks would not meet."
    ),
    severity="error",
    silenceable=True,
    check=_env,
)


def _host_port_nodes(ctx: Context) -> Iterator[Finding]:
    """hostPorts allow one pod per node, whatever the affinity: each pod needs its own node.

    The scheduler's NodePorts filter already keeps two pods with equal hostPorts off one node (the
    rendered anti-affinity just states it), so the risk is not a port clash but a cluster with
    fewer fitting nodes than pods: the rest stay Pending, and the pods that did start wait for
    them forever, holding their nodes. paddlegen cannot count nodes, so it warns unless something
    bounds that wait: Volcano starting all pods or none, or run.activeDeadlineSeconds.
    """
    settings = ctx.spec.get("distributed", {})
    replicas = worker_replicas(ctx)
    if not settings.get("hostPorts", True) or replicas < 2:
        return
    scheduling = ctx.spec.get("scheduling", {})
    gang = (
        scheduling.get("scheduler") == "volcano"
        and scheduling.get("minAvailable", replicas) >= replicas
    )
    if gang or "activeDeadlineSeconds" in ctx.spec.get("run", {}):
        return
    path: FieldPath = (
        ("spec", "worker", "replicas")
        if "replicas" in ctx.spec.get("worker", {})
        else ("spec", "distributed", "hostPorts")
    )
    yield ctx.finding(
        path,
        f"hostPorts allow one pod per node, so the {replicas} pods need "
        f"{replicas} nodes; if fewer fit, the pods that start wait for the rest "
        "forever (the image waits until every pod runs)",
        "bound the wait with run.activeDeadlineSeconds, start all pods or none with "
        "scheduling.scheduler: volcano, or set distributed.hostPorts: false "
        "(every pod has its own IP)",
    )


HOSTPORT_NODES = SpecRule(
    "hostport-nodes",
    "hostPorts take a node per pod: something bounds the wait for them",
    explanation=(
        "hostPorts allow one pod per node, so each pod needs a node of its own. On a cluster with "
        "fewer fitting nodes than pods, the rest stay Pending and the started ones wait for them "
        "for ever, holding their nodes: something (a gang, or a deadline) should bound that wait."
    ),
    severity="warning",
    silenceable=True,
    check=_host_port_nodes,
)


def _data_layout(ctx: Context) -> Iterator[Finding]:
    prep = ctx.spec.get("dataPrep")
    if prep is None:
        return
    # The trainers read <JOB_PATH>/<JOB_NAME>/<trainer id>/data, written by the data Job.
    replicas = worker_replicas(ctx)
    split = prep.get("splitCount", replicas)
    if split != replicas:
        effect = (
            f"trainers {split} and up get no data"
            if split < replicas
            else f"parts {replicas} and up are never read"
        )
        yield ctx.finding(
            ("spec", "dataPrep", "splitCount"),
            f"splitCount {split} differs from "
            f"the {replicas} trainers: trainer i reads part i, so {effect}",
            "leave splitCount out to split per trainer",
        )
    mounts = {v["name"]: v["mountPath"] for v in ctx.spec.get("volumes", [])}
    read = ctx.spec.get("distributed", {}).get("volume")
    if read in mounts and prep["volume"] != read:
        yield ctx.finding(
            ("spec", "dataPrep", "volume"),
            f"the data Job writes to volume "
            f"'{prep['volume']}' but the trainers read volume '{read}' "
            "(distributed.volume)",
            f"use volume '{read}'",
        )
    elif read in mounts and "outDir" in prep:
        expected = posixpath.join(mount_point(mounts[read]), ctx.data["metadata"]["name"])
        if mount_point(prep["outDir"]) != expected:
            yield ctx.finding(
                ("spec", "dataPrep", "outDir"),
                f"the trainers read {expected} (JOB_PATH/JOB_NAME), not this outDir",
                "leave outDir out",
            )


DATAPREP_LAYOUT = SpecRule(
    "dataprep-layout",
    "the data Job writes where the trainers read",
    explanation=(
        "`distributed-job`'s image reads its data from a fixed place on its volume. A "
        "data-preparation Job that writes elsewhere leaves the trainers nothing to read."
    ),
    severity="warning",
    silenceable=True,
    check=_data_layout,
)


def _training_ports(ctx: Context) -> dict[tuple[int, str], str]:
    """The training container's job ports (no sidecar may take them)."""
    settings = {**vars(DISTRIBUTED_DEFAULTS), **ctx.spec.get("distributed", {})}
    count = settings["portsNum"] + settings["portsNumSparse"]
    return {(settings["port"] + i, "TCP"): f"jobport{i}" for i in range(count)}


RULES = WorkloadRules(
    rules=(
        DISTRIBUTED_ROLES,
        DISTRIBUTED_REQUIRED,
        DISTRIBUTED_PORTS,
        DISTRIBUTED_COMMAND,
        DISTRIBUTED_ENV,
        HOSTPORT_NODES,
        DATAPREP_LAYOUT,
    ),
    training_ports=_training_ports,
)
