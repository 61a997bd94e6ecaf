"""Semantic rules JSON Schema cannot express; each has a rule id and points at a position."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any

from paddlegen.errors import Diagnostic
from paddlegen.spec.loader import Document, FieldPath, format_path
from paddlegen.spec.model import (
    CEPHFS_CSI_DRIVER,
    CLAIM_SOURCES,
    DISTRIBUTED_DEFAULTS,
    ROLE_NAMES,
    VOLUME_SOURCES,
    role_value,
)
from paddlegen.spec.secrets import is_literal_credential
from paddlegen.workloads import DEFAULT_WORKLOAD, WORKLOADS
from paddlegen.workloads.base import RUN_KEYS, Workload

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SIZED_SOURCES = ("nfs", "efs", "cephfs", "dynamic")


class _Ctx:
    """What a check sees: the document, its spec section and the effective workload."""

    def __init__(self, doc: Document, workload: str | None) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.spec: dict[str, Any] = doc.data.get("spec", {})
        self.workload = workload or self.spec.get("workload", DEFAULT_WORKLOAD)

    def error(
        self,
        path: FieldPath,
        message: str,
        rule: str,
        hint: str = "",
        *,
        key: bool = False,
        severity: str = "error",
    ) -> Diagnostic:
        pos = self.doc.where(path, key=key)
        return Diagnostic(
            self.doc.file, pos.line, pos.col, severity, format_path(path), message, rule, hint
        )

    def roles(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for role in ROLE_NAMES:
            if role in self.spec:
                yield role, self.spec[role]


Check = Callable[[_Ctx], Iterator[Diagnostic]]


def _single_node_job(ctx: _Ctx) -> Iterator[Diagnostic]:
    if ctx.workload != "job":
        return
    hint = "use workload 'distributed-job' or 'paddlejob' for several nodes"
    for role, body in ctx.roles():
        if role != "worker":
            yield ctx.error(
                ("spec", role),
                f"workload 'job' has no '{role}' role",
                "job-replicas",
                hint,
                key=True,
            )
        elif body.get("replicas", 1) > 1:
            yield ctx.error(
                ("spec", role, "replicas"),
                f"workload 'job' runs exactly one pod, not {body['replicas']}",
                "job-replicas",
                hint,
            )


def _image(ctx: _Ctx) -> Iterator[Diagnostic]:
    if "image" in ctx.spec:
        return
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    missing = [role for role, body in roles.items() if "image" not in body]
    if missing:
        yield ctx.error(
            ("spec",),
            "no image: set spec.image, or an image on every role "
            f"(missing on: {', '.join(missing)})",
            "image-required",
            key=True,
        )


def _derived_names(ctx: _Ctx) -> Iterator[Diagnostic]:
    name = ctx.data["metadata"]["name"]
    names = WORKLOADS[ctx.workload].derived_names(name, ctx.spec)
    if "dataPrep" in ctx.spec:
        names.append(f"{name}-data")
    for derived in names:
        if len(derived) > 63 or not _DNS1035.match(derived):
            yield ctx.error(
                ("metadata", "name"),
                f"'{name}' is too long for workload '{ctx.workload}': the derived "
                f"name '{derived}' has {len(derived)} characters, more than 63",
                "name-length",
                f"shorten the name by {len(derived) - 63} characters",
            )
            return


def _mount_point(path: str) -> str:
    """The directory a container path names: '/data/', '/data/.' and '//data' are all '/data'.

    Lexical, as the API server cannot know the image's symlinks; Linux reads a leading '//' as
    '/', which posixpath.normpath keeps (POSIX leaves it implementation-defined).
    """
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def _volumes(ctx: _Ctx) -> Iterator[Diagnostic]:
    names: dict[str, int] = {}
    mounts: dict[str, int] = {}
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        here: FieldPath = ("spec", "volumes", i)
        sources = [s for s in VOLUME_SOURCES if s in volume]
        if len(sources) != 1:
            found = ", ".join(sources) or "none"
            yield ctx.error(
                here,
                f"a volume needs exactly one source, found {found}",
                "volume-source",
                "one of: " + ", ".join(VOLUME_SOURCES),
            )
        elif sources[0] in _SIZED_SOURCES and "capacity" not in volume:
            yield ctx.error(
                here,
                f"a '{sources[0]}' volume needs a capacity",
                "volume-capacity",
                "for example capacity: 10Gi",
            )
        for key, seen, what in (("name", names, "name"), ("mountPath", mounts, "mountPath")):
            value = volume[key]
            same = _mount_point(value) if key == "mountPath" else value
            if same in seen:
                first = ctx.spec["volumes"][seen[same]][key]
                also = f" (as '{first}')" if first != value else ""
                yield ctx.error(
                    (*here, key),
                    f"volume {what} '{value}' is already used by spec.volumes[{seen[same]}]{also}",
                    "volume-unique",
                )
            seen.setdefault(same, i)
    if ctx.spec.get("shm"):
        # spec.shm gives the training pods a Memory emptyDir named 'dshm' at /dev/shm.
        for i, volume in enumerate(ctx.spec.get("volumes", [])):
            if volume["name"] == "dshm":
                yield ctx.error(
                    ("spec", "volumes", i, "name"),
                    "volume name 'dshm' is taken by the /dev/shm volume spec.shm adds",
                    "volume-unique",
                    "rename the volume",
                )
            if _mount_point(volume["mountPath"]) == "/dev/shm":
                yield ctx.error(
                    ("spec", "volumes", i, "mountPath"),
                    "spec.shm already mounts /dev/shm",
                    "volume-unique",
                    "set the size with spec.shm, or drop spec.shm to mount your own",
                )
    for section in ("distributed", "dataPrep"):
        ref = ctx.spec.get(section, {}).get("volume")
        if ref is not None and ref not in names:
            yield ctx.error(
                ("spec", section, "volume"),
                f"no volume named '{ref}' in spec.volumes",
                "volume-reference",
                "defined: " + (", ".join(names) or "none"),
            )


def _cephfs(ctx: _Ctx) -> Iterator[Diagnostic]:
    """The schema holds each form of a cephfs volume to its fields; what it cannot see: that the
    in-tree form no longer works, and whether the CSI form's Secret has a namespace."""
    namespace = ctx.data["metadata"].get("namespace")
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        cephfs = volume.get("cephfs")
        if not isinstance(cephfs, dict):
            continue
        if cephfs.get("inTree"):
            yield ctx.error(
                ("spec", "volumes", i),
                f"volume '{volume['name']}' uses the in-tree CephFS plugin (PV spec.cephfs): "
                "Kubernetes deprecated it in 1.28, and from 1.31 it does nothing (pods cannot "
                "mount the volume)",
                "cephfs-in-tree",
                f"use the CephFS CSI driver, {CEPHFS_CSI_DRIVER}: drop inTree, monitors and "
                "user, and set clusterID, fsName and secretName, a Secret with userID and userKey",
                severity="warning",
            )
        elif "secretNamespace" not in cephfs and not namespace:
            # A cluster-scoped PV names its Secret's namespace. The API server takes a reference
            # without one, but the kubelet then looks the Secret up in no namespace: the volume
            # never mounts.
            yield ctx.error(
                ("spec", "volumes", i, "cephfs", "secretName"),
                f"the CephFS CSI volume '{volume['name']}' needs the namespace of its Secret "
                f"'{cephfs['secretName']}', and the job has none to default to",
                "cephfs-secret-namespace",
                "set cephfs.secretNamespace (where the Secret is), or metadata.namespace",
            )


def _env(ctx: _Ctx) -> Iterator[Diagnostic]:
    lists: list[FieldPath] = [("spec", "env")]
    lists += [("spec", role, "env") for role, _ in ctx.roles()]
    for base in lists:
        entries = ctx.spec.get(str(base[1]), {}) if len(base) == 3 else ctx.spec
        seen: dict[str, int] = {}
        for i, entry in enumerate(entries.get("env", [])):
            name = entry["name"]
            if name in seen:
                yield ctx.error(
                    (*base, i, "name"),
                    f"env '{name}' is already set at {format_path((*base, seen[name]))}",
                    "env-unique",
                )
            seen.setdefault(name, i)
            if "value" in entry and "valueFrom" in entry:
                yield ctx.error(
                    (*base, i), f"env '{name}' sets both value and valueFrom", "env-value"
                )
            if "value" in entry and is_literal_credential(name, entry["value"]):
                # The value itself is never repeated: it must not land in CI logs either.
                yield ctx.error(
                    (*base, i, "value"),
                    f"env '{name}' holds a literal credential; "
                    "it would be committed to Git in the rendered manifests",
                    "secret-literal",
                    "use valueFrom.secretKeyRef with a Secret",
                )


def _image_tags(ctx: _Ctx) -> Iterator[Diagnostic]:
    """GitOps promises that a commit pins what runs; an untagged or `latest` image breaks that."""
    places: list[FieldPath] = [
        ("spec",),
        *(("spec", role) for role, _ in ctx.roles()),
        ("spec", "dataPrep"),
    ]
    for place in places:
        section: Any = ctx.data
        for part in place:
            section = section.get(part, {})
        image = section.get("image")
        if not isinstance(image, str) or "@" in image:
            continue  # a digest pins it exactly
        name, _, tag = image.rpartition(":")
        if not name or "/" in tag or tag == "latest":
            yield ctx.error(
                (*place, "image"),
                f"image '{image}' is not pinned to a tag: the same "
                "commit can run different code tomorrow",
                "image-tag",
                "use an explicit version tag or a digest",
                severity="warning",
            )


def _limits(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Requests are always set (a default when the spec has none); limits stay the user's call,
    but a pod without a memory limit can take a node's memory from everything else on it."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    missing = [
        role
        for role, body in roles.items()
        if "memory" not in role_value(ctx.spec, body, "resources", {}).get("limits", {})
    ]
    if missing:
        path = ("spec", "resources") if "resources" in ctx.spec else ("spec",)
        # Roles are named only where the workload has several: a `job` spec has no "worker".
        which = f" for {', '.join(missing)}" if len(WORKLOADS[ctx.workload].roles) > 1 else ""
        yield ctx.error(
            path,
            f"no memory limit{which}: a runaway trainer can take the node's memory",
            "limits-missing",
            "set resources.limits.memory",
            key=True,
            severity="warning",
        )


def _min_available(ctx: _Ctx) -> Iterator[Diagnostic]:
    wanted = ctx.spec.get("scheduling", {}).get("minAvailable")
    if wanted is None:
        return
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    total = sum(body.get("replicas", 1) for body in roles.values())
    if wanted > total:
        yield ctx.error(
            ("spec", "scheduling", "minAvailable"),
            f"minAvailable {wanted} is more than the job's {total} pod{'s' if total != 1 else ''}",
            "min-available",
            "the job could never be scheduled",
        )


def _paddlejob_roles(ctx: _Ctx) -> Iterator[Diagnostic]:
    if ctx.workload != "paddlejob":
        return
    has_ps = "ps" in ctx.spec
    if "heter" in ctx.spec and not has_ps:
        yield ctx.error(
            ("spec", "heter"),
            "the heter role needs ps: heterogeneous training is a form of PS mode",
            "paddlejob-heter",
            "add spec.ps, or remove spec.heter",
            key=True,
        )
    settings = ctx.spec.get("paddlejob", {})
    gloo = settings.get("withGloo", 0)  # 0 is off, so it is harmless anywhere
    if gloo and not has_ps:
        yield ctx.error(
            ("spec", "paddlejob", "withGloo"),
            f"withGloo {gloo} needs ps: the operator only starts Gloo in PS mode",
            "paddlejob-gloo",
            "add spec.ps, or remove withGloo",
        )
    # (withGloo works with every intranet: the operator sets Gloo up whenever ps exists,
    # paddle-operator v0.3.5 paddlejob_helper.go:268-275, and its own wide_and_deep_service
    # example combines it with intranet Service.)
    yield from _paddlejob_elastic(ctx, settings, has_ps)


def _paddlejob_elastic(ctx: _Ctx, settings: dict[str, Any], has_ps: bool) -> Iterator[Diagnostic]:
    """The operator turns elastic mode on when the field is present, whatever its value
    (paddlejob_helper.go:331, 364): then the pods do not get its endpoints ConfigMap (no
    envFrom), which PS mode needs, and every pod runs with restartPolicy OnFailure."""
    if "elastic" not in settings:
        return
    where = ("spec", "paddlejob", "elastic")
    if settings["elastic"] == 0:
        yield ctx.error(
            where,
            "elastic: 0 turns elastic mode on: the operator only checks that the field is there",
            "paddlejob-elastic",
            "remove paddlejob.elastic to turn it off",
            severity="warning",
        )
    if has_ps:
        yield ctx.error(
            where,
            "elastic mode has no PS mode: the operator then gives the pods no endpoints "
            "(its ConfigMap is not passed on), which ps and worker pods need to find each other",
            "paddlejob-elastic",
            "remove spec.ps (collective training), or remove elastic",
        )
    restart = ctx.spec.get("run", {}).get("restartPolicy")
    if restart and restart != "OnFailure":
        yield ctx.error(
            ("spec", "run", "restartPolicy"),
            f"elastic mode runs every pod with restartPolicy OnFailure; {restart} is overridden",
            "paddlejob-elastic",
            "remove run.restartPolicy",
            severity="warning",
        )


def _operator_env(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Env an operator sets itself: the spec's value would override it or be replaced."""
    workload = WORKLOADS[ctx.workload]
    if not workload.operator_env:
        return
    for base in [("spec",), *(("spec", role) for role, _ in ctx.roles())]:
        body = ctx.spec if len(base) == 1 else ctx.spec[str(base[1])]
        for i, entry in enumerate(body.get("env", [])):
            how = workload.operator_env.get(entry["name"])
            if how:
                yield ctx.error(
                    (*base, "env", i, "name"),
                    f"env '{entry['name']}' is set by {how}",
                    "operator-env",
                    f"remove it here; workload '{ctx.workload}' gets it from its operator",
                )


def _kubeflow_roles(ctx: _Ctx) -> Iterator[Diagnostic]:
    if ctx.workload == "kubeflow-paddlejob" and "heter" in ctx.spec:
        yield ctx.error(
            ("spec", "heter"),
            "workload 'kubeflow-paddlejob' has no heter role: the "
            "Kubeflow PaddleJob knows only Master (from ps) and Worker",
            "kubeflow-heter",
            "use workload 'paddlejob' for heterogeneous training",
            key=True,
        )


def _ignored_settings(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A settings section, or a run field, that the workload's object has no place for would
    vanish silently (the CRD would prune it)."""
    workload = WORKLOADS[ctx.workload]
    for owner in WORKLOADS.values():
        section = owner.settings
        if section and section in ctx.spec and owner is not workload:
            yield ctx.error(
                ("spec", section),
                f"spec.{section} only applies to workload "
                f"'{owner.name}'; workload '{ctx.workload}' ignores it",
                "workload-setting",
                key=True,
                severity="warning",
            )
    batch_jobs = ctx.workload in ("job", "distributed-job") or "dataPrep" in ctx.spec
    if ctx.spec.get("run", {}).get("recreateOnChange") and not batch_jobs:
        yield ctx.error(
            ("spec", "run", "recreateOnChange"),
            f"run.recreateOnChange applies to batch Jobs; workload '{ctx.workload}' renders "
            "none here (its custom resource takes changes in place)",
            "workload-setting",
            key=True,
            severity="warning",
        )
    for key in RUN_KEYS:
        if key in ctx.spec.get("run", {}) and key not in workload.run_keys:
            yield ctx.error(
                ("spec", "run", key),
                f"the {workload.title} has no {key}; workload '{ctx.workload}' ignores it",
                "workload-setting",
                _run_key_home(key, workload),
                key=True,
                severity="warning",
            )


def _run_key_home(key: str, workload: Workload) -> str:
    """The hint: a workload with the same kind of object that does carry ``key``."""
    for other in WORKLOADS.values():
        if other.kind_name == workload.kind_name and key in other.run_keys and other.run_policy:
            return f"workload '{other.name}' supports it ({other.run_policy.rsplit('.', 1)[-1]})"
    return ""


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


def _worker_replicas(ctx: _Ctx) -> int:
    return int(ctx.spec.get("worker", {}).get("replicas", 1))


def _distributed_job(ctx: _Ctx) -> Iterator[Diagnostic]:
    if ctx.workload != "distributed-job":
        return
    for role in ("ps", "heter"):
        if role in ctx.spec:
            yield ctx.error(
                ("spec", role),
                f"workload 'distributed-job' has no '{role}' role: "
                "every pod runs both a pserver and a trainer",
                "distributed-roles",
                "set worker.replicas to the number of pods, or use workload "
                "'paddlejob' for separate pserver pods",
                key=True,
            )
    settings = ctx.spec.get("distributed", {})
    where: FieldPath = ("spec", "distributed") if "distributed" in ctx.spec else ("spec",)
    for key, (env, hint) in _DISTRIBUTED_REQUIRED.items():
        if key not in settings:
            yield ctx.error(
                where,
                f"workload 'distributed-job' needs distributed.{key}: the "
                f"image's start script stops when {env} is unset",
                "distributed-required",
                hint,
                key=True,
            )
    port = settings.get("port", DISTRIBUTED_DEFAULTS.port)
    count = settings.get("portsNum", DISTRIBUTED_DEFAULTS.portsNum) + settings.get(
        "portsNumSparse", DISTRIBUTED_DEFAULTS.portsNumSparse
    )
    if port + count - 1 > _MAX_PORT:
        yield ctx.error(
            (*where, "port") if "port" in settings else where,
            f"ports {port}..{port + count - 1} (port + portsNum + portsNumSparse - 1)"
            f" go beyond {_MAX_PORT}",
            "distributed-ports",
            f"use a port of at most {_MAX_PORT - count + 1}",
        )
    if "command" in settings:
        for section in ("spec", "worker"):
            body = ctx.spec if section == "spec" else ctx.spec.get("worker", {})
            if "command" in body:
                yield ctx.error(
                    ("spec", "distributed", "command"),
                    f"distributed.command and {section}.command both set the start command",
                    "distributed-command",
                    "keep one of them",
                    key=True,
                )
    for base in (("spec",), ("spec", "worker")):
        body = ctx.spec if len(base) == 1 else ctx.spec.get("worker", {})
        for i, entry in enumerate(body.get("env", [])):
            source = _DISTRIBUTED_ENV.get(entry["name"])
            if source:
                yield ctx.error(
                    (*base, "env", i, "name"),
                    f"env '{entry['name']}' is set by workload 'distributed-job' from {source}",
                    "distributed-env",
                    "remove it here",
                )


def _host_port_nodes(ctx: _Ctx) -> Iterator[Diagnostic]:
    """hostPorts allow one pod per node, whatever the affinity: each pod needs its own node.

    The scheduler's NodePorts filter already keeps two pods with equal hostPorts off one node (the
    rendered anti-affinity just states it), so the risk is not a port clash but a cluster with
    fewer fitting nodes than pods: the rest stay Pending, and the pods that did start wait for
    them forever, holding their nodes. paddlegen cannot count nodes, so it warns unless something
    bounds that wait: Volcano starting all pods or none, or run.activeDeadlineSeconds.
    """
    settings = ctx.spec.get("distributed", {})
    replicas = _worker_replicas(ctx)
    if ctx.workload != "distributed-job" or not settings.get("hostPorts", True) or replicas < 2:
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
    yield ctx.error(
        path,
        f"hostPorts allow one pod per node, so the {replicas} pods need "
        f"{replicas} nodes; if fewer fit, the pods that start wait for the rest "
        "forever (the image waits until every pod runs)",
        "hostport-nodes",
        "bound the wait with run.activeDeadlineSeconds, start all pods or none with "
        "scheduling.scheduler: volcano, or set distributed.hostPorts: false "
        "(every pod has its own IP)",
        severity="warning",
    )


def _data_prep(ctx: _Ctx) -> Iterator[Diagnostic]:
    prep = ctx.spec.get("dataPrep")
    if prep is None:
        return
    if "image" not in prep and "image" not in ctx.spec:
        yield ctx.error(
            ("spec", "dataPrep"),
            "the data Job has no image: set dataPrep.image or spec.image",
            "image-required",
            key=True,
        )
    if ctx.workload != "distributed-job":
        return
    # The trainers read <JOB_PATH>/<JOB_NAME>/<trainer id>/data, written by the data Job.
    replicas = _worker_replicas(ctx)
    split = prep.get("splitCount", replicas)
    if split != replicas:
        effect = (
            f"trainers {split} and up get no data"
            if split < replicas
            else f"parts {replicas} and up are never read"
        )
        yield ctx.error(
            ("spec", "dataPrep", "splitCount"),
            f"splitCount {split} differs from "
            f"the {replicas} trainers: trainer i reads part i, so {effect}",
            "dataprep-layout",
            "leave splitCount out to split per trainer",
            severity="warning",
        )
    mounts = {v["name"]: v["mountPath"] for v in ctx.spec.get("volumes", [])}
    read = ctx.spec.get("distributed", {}).get("volume")
    if read in mounts and prep["volume"] != read:
        yield ctx.error(
            ("spec", "dataPrep", "volume"),
            f"the data Job writes to volume "
            f"'{prep['volume']}' but the trainers read volume '{read}' "
            "(distributed.volume)",
            "dataprep-layout",
            f"use volume '{read}'",
            severity="warning",
        )
    elif read in mounts and "outDir" in prep:
        expected = posixpath.join(_mount_point(mounts[read]), ctx.data["metadata"]["name"])
        if _mount_point(prep["outDir"]) != expected:
            yield ctx.error(
                ("spec", "dataPrep", "outDir"),
                f"the trainers read {expected} (JOB_PATH/JOB_NAME), not this outDir",
                "dataprep-layout",
                "leave outDir out",
                severity="warning",
            )


# Access modes that confine a volume to one node (or one pod): several pods cannot share it.
_SINGLE_MOUNT_MODES = {"ReadWriteOnce": "one node", "ReadWriteOncePod": "one pod"}


def _single_mount_volumes(ctx: _Ctx) -> Iterator[Diagnostic]:
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    trainers = sum(body.get("replicas", 1) for body in roles.values())
    data_volume = ctx.spec.get("dataPrep", {}).get("volume")
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        modes = volume.get("accessModes", [])
        single = [m for m in modes if m in _SINGLE_MOUNT_MODES]
        if not single or "ReadWriteMany" in modes or not any(s in volume for s in CLAIM_SOURCES):
            continue
        pods = trainers + (volume["name"] == data_volume)
        if pods > 1:
            data = " including the data Job" if volume["name"] == data_volume else ""
            yield ctx.error(
                ("spec", "volumes", i, "accessModes"),
                f"{single[0]} lets only "
                f"{_SINGLE_MOUNT_MODES[single[0]]} mount volume '{volume['name']}', "
                f"but {pods} pods{data} share it; the others cannot mount it",
                "volume-access-mode",
                "use accessModes: [ReadWriteMany] (NFS, EFS and CephFS support it)",
                severity="warning",
            )


def _argocd_ttl(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Argo CD sees a deleted object as Missing: the app goes OutOfSync, and an auto-synced app
    creates it again, so the training runs again. The spec cannot know whether the app
    auto-syncs, hence a warning."""
    workload = WORKLOADS[ctx.workload]
    kind = workload.kind_name
    if workload.ttl_deletes and "ttlSecondsAfterFinished" in ctx.spec.get("run", {}):
        yield ctx.error(
            ("spec", "run", "ttlSecondsAfterFinished"),
            f"the finished {kind} is "
            "deleted after ttlSecondsAfterFinished; in an Argo CD app it then flaps "
            "OutOfSync, and an auto-synced app creates it again, running the "
            "training again",
            "argocd-ttl",
            "drop the TTL and delete a finished job "
            "by removing its spec, which Argo CD prunes; ignoreDifferences cannot "
            "help: the object is gone, not different",
            severity="warning",
        )


CHECKS: tuple[Check, ...] = (
    _single_node_job,
    _image,
    _derived_names,
    _volumes,
    _cephfs,
    _env,
    _image_tags,
    _limits,
    _min_available,
    _paddlejob_roles,
    _operator_env,
    _kubeflow_roles,
    _ignored_settings,
    _distributed_job,
    _host_port_nodes,
    _data_prep,
    _single_mount_volumes,
    _argocd_ttl,
)


# The registry of every rule id the checks above report, which a spec's `ignore` entries and
# `--ignore` name (all but REQUIRED can be silenced). The schema's `ruleId` enum lists the same
# ids; tests hold both to the checks' calls.
RULES: tuple[str, ...] = (
    "job-replicas",
    "image-required",
    "name-length",
    "volume-source",
    "volume-capacity",
    "volume-unique",
    "volume-reference",
    "cephfs-in-tree",
    "cephfs-secret-namespace",
    "env-unique",
    "env-value",
    "secret-literal",
    "image-tag",
    "limits-missing",
    "min-available",
    "paddlejob-heter",
    "paddlejob-gloo",
    "paddlejob-elastic",
    "operator-env",
    "kubeflow-heter",
    "workload-setting",
    "distributed-roles",
    "distributed-required",
    "distributed-ports",
    "distributed-command",
    "distributed-env",
    "hostport-nodes",
    "dataprep-layout",
    "volume-access-mode",
    "argocd-ttl",
)
# The rules that guard what no job can be built without: a volume's one source, the volumes
# that settings name, the distributed image's volume and config folder. Silenced, they would
# leave paddlegen nothing it could render, so `ignore` entries and `--ignore` may not name them.
REQUIRED: tuple[str, ...] = ("volume-source", "volume-reference", "distributed-required")


def semantic_diagnostics(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Run every check on a spec that already passed the schema."""
    ctx = _Ctx(doc, workload)
    return sorted(d for check in CHECKS for d in check(ctx))
