"""Semantic rules JSON Schema cannot express; each has a rule id and points at a position."""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any, TypeVar

from paddlegen.errors import Diagnostic, InvalidValueError
from paddlegen.spec.loader import Document, FieldPath, format_path
from paddlegen.spec.model import (
    CEPHFS_CSI_DRIVER,
    CLAIM_SOURCES,
    CONTAINER_LISTS,
    DEFAULT_REQUESTS,
    DEFAULT_WORKLOAD,
    DISTRIBUTED_DEFAULTS,
    GPU_RESOURCE,
    KUEUE_PRIORITY_LABEL,
    KUEUE_QUEUE_LABEL,
    OBJECT_SOURCES,
    PV_SOURCES,
    ROLE_NAMES,
    VOLUME_SOURCES,
    KubeflowSettings,
    role_value,
)
from paddlegen.spec.quantity import canonical, server_value, spelling
from paddlegen.spec.secrets import has_url_password, is_literal_credential
from paddlegen.workloads import WORKLOADS, collective_job, trainjob
from paddlegen.workloads.base import RUN_KEYS, TRAINING_CONTAINER, Workload
from paddlegen.workloads.collective_job import LAUNCHER, QUEUED_STOP_EXIT_CODES

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_SIZED_SOURCES = ("nfs", "efs", "cephfs", "dynamic")
T = TypeVar("T")


class _Ctx:
    """What a check sees: the document, its spec section and the effective workload."""

    def __init__(self, doc: Document, workload: str | None) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.spec: dict[str, Any] = doc.data.get("spec", {})
        self.workload = workload or self.spec.get("workload", DEFAULT_WORKLOAD)
        self._roles = [(role, self.spec[role]) for role in ROLE_NAMES if role in self.spec]
        self._walks: dict[Callable[[_Ctx], Iterable[Any]], list[Any]] = {}

    def once(self, walk: Callable[[_Ctx], Iterable[T]]) -> list[T]:
        """What ``walk`` finds in this document, walked once however many checks ask (every
        check runs on every spec: a walk each repeats is paid by every render)."""
        found = self._walks.get(walk)
        if found is None:
            found = self._walks[walk] = list(walk(self))
        return found

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
        """The roles the spec gives, in ROLE_NAMES order, each with its section."""
        return iter(self._roles)


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
    for section, use in (("distributed", "the trainers read"), ("dataPrep", "the data Job writes")):
        ref = ctx.spec.get(section, {}).get("volume")
        if ref is None:
            continue
        if ref not in names:
            yield ctx.error(
                ("spec", section, "volume"),
                f"no volume named '{ref}' in spec.volumes",
                "volume-reference",
                "defined: " + (", ".join(names) or "none"),
            )
            continue
        source = next((s for s in OBJECT_SOURCES if s in ctx.spec["volumes"][names[ref]]), None)
        if source:
            yield ctx.error(
                ("spec", section, "volume"),
                f"volume '{ref}' is a {source}: read-only files of one object (at most 1 MiB), "
                f"not a volume {use} the training data on",
                "volume-reference",
                "name a volume that holds data (nfs, efs, cephfs, claim, dynamic, hostPath)",
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
    for place, section in _container_places(ctx, "env"):
        base: FieldPath = (*place, "env")
        seen: dict[str, int] = {}
        for i, entry in enumerate(section["env"]):
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
                    "use valueFrom.secretKeyRef with a Secret"
                    + (
                        "; for a URL, the password in a variable of its own from a Secret, "
                        "declared before this one, as $(NAME) in the URL"
                        if has_url_password(entry["value"])
                        else ""
                    ),
                )


def _images(ctx: _Ctx) -> Iterator[tuple[FieldPath, str]]:
    """Every image the spec names (spec, roles, dataPrep, init containers and sidecars), with
    the place that names it."""
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
        if isinstance(image, str):
            yield place, image
    for place, container in ctx.once(_init_containers):
        yield place, container["image"]


def _image_tags(ctx: _Ctx) -> Iterator[Diagnostic]:
    """GitOps promises that a commit pins what runs; an untagged or `latest` image breaks that."""
    for place, image in ctx.once(_images):
        if "@" in image:
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
    elif wanted < total and ctx.workload == "paddlejob" and not _elastic(ctx):
        # paddle-operator v0.3.5: the endpoints ConfigMap is made once every pod has an IP
        # (paddlejob_controller.go:250, paddlejob_helper.go:41 isAllPodsReady), and each
        # container takes its env from it (envFrom, not optional: paddlejob_helper.go:346).
        yield ctx.error(
            ("spec", "scheduling", "minAvailable"),
            f"minAvailable {wanted} of {total} pods can deadlock: Volcano may start "
            f"{wanted} pods while the rest wait for room, and the started ones cannot run "
            "until the operator's endpoints ConfigMap exists, which it makes only once every "
            "pod has an IP; the job then holds what it got and never trains",
            "paddlejob-min-available",
            "leave minAvailable out (all pods start together)",
            severity="warning",
        )


def _elastic(ctx: _Ctx) -> bool:
    """Elastic mode: the operator's pods take no endpoints ConfigMap (paddlejob_helper.go:331)."""
    return "elastic" in ctx.spec.get("paddlejob", {})


def _priority_class(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Under Volcano a batch Job's pods give the gang its priority (Volcano's PodGroup for the
    Job takes the pods'): a pod priority other than scheduling.priorityClassName would
    silently replace the gang's. An operator puts the gang's on its PodGroup, so its pods may
    have another."""
    scheduling = ctx.spec.get("scheduling", {})
    gang = scheduling.get("priorityClassName")
    if gang is None or scheduling.get("scheduler") != "volcano":
        return
    workload = WORKLOADS[ctx.workload]
    if workload.scheduling_policy or "priorityClassName" in workload.unsupported:
        return  # the operator's PodGroup has its own; or workload-unsupported refuses it
    places = [(("spec",), ctx.spec), *((("spec", r), body) for r, body in ctx.roles())]
    for path, body in places:
        own = body.get("priorityClassName")
        if own is not None and own != gang:
            yield ctx.error(
                (*path, "priorityClassName"),
                f"priorityClassName {own!r} differs from the gang's {gang!r}: a "
                f"{ctx.workload}'s pods give Volcano's group for them its priority, so the "
                "gang's would be lost",
                "priority-class",
                "leave the pods' priorityClassName out (they carry the gang's), or set the same",
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
    elif "heter" in ctx.spec:
        # paddle-operator v0.3.5 api/v1/paddlejob_types.go:44-48 and
        # controllers/paddlejob_helper.go:265; Paddle 2.6's role maker
        # (python/paddle/distributed/fleet/base/role_maker.py, _ps_env) raises for HETER.
        yield ctx.error(
            ("spec", "heter"),
            "the operator (v0.3.5) starts heter pods with TRAINING_ROLE=HETER, which Paddle's "
            "role maker refuses (it takes HETER_TRAINER), and lists them in "
            "PADDLE_HETER_ENDPOINTS, which Paddle does not read: without your own mapping the "
            "heter pods fail in fleet.init() and the job never trains",
            "paddlejob-heter",
            "start heter pods with an entry point that sets TRAINING_ROLE=HETER_TRAINER and the "
            "PADDLE_*HETER* variables Paddle reads, or remove spec.heter",
            key=True,
            severity="warning",
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
    yield from _paddlejob_clean_pod_policy(ctx, settings)


def _paddlejob_clean_pod_policy(ctx: _Ctx, settings: dict[str, Any]) -> Iterator[Diagnostic]:
    """paddle-operator v0.3.5 deletes the pods of a Completed job only under "", Always or
    OnCompletion (controllers/paddlejob_controller.go:188-199); otherwise every reconcile
    creates each missing pod (:239-247), Completed or not, even while the job is being deleted.
    A pod gone after the job finished then trains again, with the endpoints of the first run
    (the ConfigMap is never updated, :250-251), and under Volcano waits Pending for ever: the
    job's PodGroup was deleted when it finished (:121-125)."""
    policy = settings.get("cleanPodPolicy")
    if policy in ("Never", "OnFailure"):
        yield ctx.error(
            ("spec", "paddlejob", "cleanPodPolicy"),
            f"cleanPodPolicy {policy} keeps the pods of a completed PaddleJob, and the "
            "operator creates any of them that goes later (node scale-down, pod garbage "
            "collection, a delete by hand): it trains again, with the first run's endpoints",
            "paddlejob-clean-pod-policy",
            "use OnCompletion (or leave it unset): logs stay readable until the job ends; "
            "keep them longer with a log collector",
            severity="warning",
        )


def _paddlejob_elastic(ctx: _Ctx, settings: dict[str, Any], has_ps: bool) -> Iterator[Diagnostic]:
    """The operator turns elastic mode on when the field is present, whatever its value
    (paddlejob_helper.go:331, 364): then the pods do not get its endpoints ConfigMap (no
    envFrom), which PS mode needs, and every pod runs with restartPolicy OnFailure."""
    if not _elastic(ctx):
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
    if "recreateOnChange" in ctx.spec.get("run", {}):
        yield ctx.error(
            ("spec", "run", "recreateOnChange"),
            "run.recreateOnChange no longer does anything: under Argo CD every change to a "
            "job's objects deletes the last run and starts a new one (they are Sync hooks)",
            "deprecated",
            "remove it",
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


# Env that makes Paddle's launcher replace the master and node count it was given with its own
# (python/paddle/distributed/launch/plugins/__init__.py:45-67 at v3.3.1, collective_compatible).
_LAUNCHER_OVERRIDES = ("PADDLE_TRAINER_ENDPOINTS", "DISTRIBUTED_TRAINER_ENDPOINTS")
# The launcher's flags that the contract's env overrides (context/__init__.py:100-107), by the
# env that does.
_CONTRACT_FLAGS = {
    "--master": "PADDLE_MASTER",
    "--nnodes": "PADDLE_NNODES",
    "--rank": "PADDLE_RANK",
    "--job_id": "PADDLE_JOB_ID",
    "--host": "POD_IP",
}


# The workloads that run Paddle's launcher with its contract on every pod, and the source
# of each variable of the contract.
_CONTRACTS = {"collective-job": collective_job.CONTRACT_ENV, "trainjob": trainjob.CONTRACT_ENV}


def _collective_job(ctx: _Ctx) -> Iterator[Diagnostic]:
    contract = _CONTRACTS.get(ctx.workload)
    if contract is None:
        return
    for role in ("ps", "heter"):
        if role in ctx.spec:
            yield ctx.error(
                ("spec", role),
                f"workload '{ctx.workload}' has no '{role}' role: every pod is a trainer of "
                "the collective (data-parallel) job",
                "collective-roles",
                "set worker.replicas to the number of pods, or use workload 'paddlejob' for "
                "parameter servers",
                key=True,
            )
    worker = ctx.spec.get("worker", {})
    if not any(body.get(key) for body in (ctx.spec, worker) for key in ("command", "args")):
        yield ctx.error(
            ("spec",),
            "nothing to run: without a command the pods run Paddle's launcher ("
            + " ".join(LAUNCHER)
            + "), which needs the training script as args",
            "collective-command",
            "set args, e.g. args: [train.py] (the launcher runs it on every pod), or a command",
            key=True,
        )
    restart = ctx.spec.get("run", {}).get("restartPolicy")
    if restart == "OnFailure":
        yield ctx.error(
            ("spec", "run", "restartPolicy"),
            f"a {ctx.workload}'s pods run with restartPolicy Never: a rank restarted in place "
            "cannot rejoin the others, and the Job's pod failure policy, which fails the whole "
            "job at once, takes no other",
            "collective-restart",
            "remove run.restartPolicy; a new run of the job restarts every rank",
        )
    for base in (("spec",), ("spec", "worker")):
        body = ctx.spec if len(base) == 1 else worker
        for i, entry in enumerate(body.get("env", [])):
            name = entry["name"]
            if name in contract:
                yield ctx.error(
                    (*base, "env", i, "name"),
                    f"env '{name}' is set by workload '{ctx.workload}' from {contract[name]}",
                    "collective-env",
                    "remove it here",
                )
            elif name in _LAUNCHER_OVERRIDES:
                yield ctx.error(
                    (*base, "env", i, "name"),
                    f"env '{name}' makes Paddle's launcher replace the master and the node count "
                    f"that workload '{ctx.workload}' gives it with its own",
                    "collective-env",
                    "remove it here: the launcher gives each process its endpoints",
                )
    yield from _collective_flags(ctx)


def _collective_flags(ctx: _Ctx) -> Iterator[Diagnostic]:
    """The launcher's own flags that the contract's env overrides, among its words before the
    training script (each of its flags takes one value) in the command and args pods run."""
    words = _run_words(ctx)
    starts = [i for i, (_, word) in enumerate(words) if word == "paddle.distributed.launch"]
    i = starts[0] + 1 if starts else len(words)
    while i < len(words) and words[i][1].startswith("--"):
        where, flag = words[i]
        name = flag.split("=", 1)[0]
        if name in _CONTRACT_FLAGS and where is not None:
            yield ctx.error(
                where,
                f"the launcher's {name} is overridden by env {_CONTRACT_FLAGS[name]}, which "
                f"workload '{ctx.workload}' sets",
                "collective-args",
                f"remove {name} and its value",
                severity="warning",
            )
        i += 1 if "=" in flag else 2


def _run_words(ctx: _Ctx) -> list[tuple[FieldPath | None, str]]:
    """The words a collective-job's or trainjob's pods run after the master wrapper, each
    with its place in the spec (None: the launcher paddlegen runs when the spec gives no
    command)."""
    worker = ctx.spec.get("worker", {})
    words: list[tuple[FieldPath | None, str]] = []
    for key in ("command", "args"):
        body, base = (worker, ("spec", "worker")) if key in worker else (ctx.spec, ("spec",))
        if key in body:
            words += [((*base, key, i), word) for i, word in enumerate(body[key])]
        elif key == "command":
            words += [(None, word) for word in LAUNCHER]
    return words


def _unsupported(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Spec settings the workload's object has no place for (``Workload.unsupported``)."""
    unsupported = WORKLOADS[ctx.workload].unsupported
    for base, body in [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]:
        for key, (severity, why) in unsupported.items():
            if key in body:
                yield ctx.error(
                    (*base, key),
                    why,
                    "workload-unsupported",
                    "remove it"
                    if severity == "error"
                    else "remove it, or use a workload whose object has the field",
                    key=True,
                    severity=severity,
                )
    if ctx.workload == "trainjob":
        yield from _trainjob_gang(ctx)


def _trainjob_gang(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Trainer's Volcano plugin makes the PodGroup of every pod, with the priority class of the
    runtime's pod template (plugins/volcano/volcano.go:113-150 at v2.3.0): a TrainJob carries
    neither a gang size nor a priority."""
    scheduling = ctx.spec.get("scheduling", {})
    if scheduling.get("scheduler") != "volcano":
        return
    if "priorityClassName" in scheduling:
        yield ctx.error(
            ("spec", "scheduling", "priorityClassName"),
            "a TrainJob (Trainer v2.3.0) cannot give its gang a priority: Trainer's PodGroup "
            "takes the priority class of the runtime's pods",
            "workload-unsupported",
            "remove it, or install a copy of paddlegen's Volcano runtime with a "
            "priorityClassName in its pod template and name it in trainjob.runtime",
            key=True,
        )
    if "minAvailable" in scheduling and scheduling["minAvailable"] < _worker_replicas(ctx):
        yield ctx.error(
            ("spec", "scheduling", "minAvailable"),
            f"Trainer's PodGroup waits for every one of the {_worker_replicas(ctx)} pods, not "
            f"{scheduling['minAvailable']}: a TrainJob (Trainer v2.3.0) carries no gang size",
            "workload-unsupported",
            "remove minAvailable: a rank that starts alone waits for the others anyway",
            key=True,
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


# Kueue's default LocalQueue: in a namespace that has one, Kueue's webhook gives every Job
# without a queue label this one (sigs.k8s.io/kueue v0.19.2
# pkg/controller/jobframework/defaults.go:80-98, DefaultLocalQueueName in
# pkg/controller/constants/constants.go:27), so it would queue the data Job too.
_KUEUE_DEFAULT_QUEUE = "default"
_KUEUE_LABELS = (KUEUE_QUEUE_LABEL, KUEUE_PRIORITY_LABEL)


# Kueue with scheduler volcano is accepted, though Kueue has no vcjob integration: paddlegen
# renders no vcjob. Kueue holds the training object suspended; Volcano gang-schedules its pods
# once admitted (README "Queueing with Kueue"):
# - a batch Job: while suspended it has no pods, and Volcano's podgroup controller works from
#   pods (v1.15.1 pkg/controllers/podgroup/pg_controller_handler.go:59-72 addPod), so no
#   PodGroup exists; on admission the pods come with Kueue's nodeSelector and the controller
#   makes the Job's PodGroup, its minMember from the Job's group-min-member annotation
#   (:222-287), owned by the Job (:384, :504-509). Preempted, the Job is suspended again
#   (Kueue v0.19.2 pkg/controller/jobs/job/job_controller.go:165-167), its pods go, its
#   PodGroup stays, and the next admission's pods join it (get or create, :301-327).
# - a Kubeflow PaddleJob: training-operator v1.9.0 deletes the pods and the PodGroup while it
#   is suspended and makes them again when it resumes (pkg/controller.v1/common/job.go:146-170).
# - a TrainJob: Trainer v2.3.0's Volcano plugin writes the PodGroup again while the TrainJob
#   is suspended (pkg/runtime/framework/plugins/volcano/volcano.go:148-158).
def _kueue(ctx: _Ctx) -> Iterator[Diagnostic]:
    """spec.scheduling.kueue: only for the workloads Kueue can suspend, and never for the data
    Job (README "Queueing with Kueue")."""
    kueue = ctx.spec.get("scheduling", {}).get("kueue")
    yield from _kueue_labels(ctx)
    if kueue is None:
        return
    here: FieldPath = ("spec", "scheduling", "kueue")
    if ctx.workload == "paddlejob":
        # PaddleFlow's PaddleJob (v0.3.5) has no suspend, and Kueue no integration for its
        # kind (v0.19.2 pkg/controller/jobs/ has none for batch.paddlepaddle.org).
        yield ctx.error(
            here,
            "Kueue cannot queue a PaddleFlow PaddleJob: its operator (v0.3.5) has no suspend, "
            "which is how Kueue holds a job until its queue has quota, and Kueue has no "
            "integration for it",
            "kueue-workload",
            "use workload collective-job, trainjob or kubeflow-paddlejob: Kueue queues each",
            key=True,
        )
    elif ctx.workload == "kubeflow-paddlejob":
        yield ctx.error(
            here,
            "Kueue queues a Kubeflow PaddleJob only with its kubeflow.org/paddlejob integration "
            "turned on, which it is not by default from Kueue v0.19",
            "kueue-workload",
            'add "kubeflow.org/paddlejob" to integrations.frameworks of Kueue\'s '
            "Configuration, or use workload collective-job or trainjob",
            key=True,
            severity="info",
        )
    if "dataPrep" in ctx.spec and kueue["queue"] == _KUEUE_DEFAULT_QUEUE:
        yield ctx.error(
            (*here, "queue"),
            "a LocalQueue named 'default' is Kueue's default queue: Kueue puts every Job of the "
            "namespace without a queue label in it, the data-preparation Job too, and a data "
            "Job that Kueue suspended and resumed reads as finished to Argo CD, so training "
            "would start before the data is ready",
            "kueue-data-prep",
            "name the LocalQueue otherwise, and have none named 'default' in the namespace",
        )
    runtime = ctx.spec.get("trainjob", {}).get("runtime")
    if ctx.workload == "trainjob" and runtime is not None:
        yield ctx.error(
            ("spec", "trainjob", "runtime"),
            f"Kueue preempts a TrainJob by suspending it, and its ranks then end with exit code "
            f"{', '.join(map(str, QUEUED_STOP_EXIT_CODES))}: unless the pod failure policy of "
            f"runtime {runtime} ignores those, as paddlegen's queued runtimes do, a preempted "
            "TrainJob fails for good",
            "kueue-runtime",
            "leave spec.trainjob.runtime out (paddlegen's queued runtime then), or give "
            f"runtime {runtime} that rule (`paddlegen runtime` prints it)",
            severity="warning",
        )
    yield from _kueue_requests(ctx)


def _kueue_labels(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Kueue's labels only through spec.scheduling.kueue: in metadata.labels they would reach
    every object (the data Job too), in podLabels every pod, which Kueue's pod integration (on
    by default) would then queue one by one."""
    places: list[FieldPath] = [("metadata", "labels"), ("spec", "podLabels")]
    places += [("spec", role, "podLabels") for role, _ in ctx.roles()]
    for place in places:
        body: Any = ctx.data
        for key in place:
            body = body.get(key, {}) if isinstance(body, dict) else {}
        for label in _KUEUE_LABELS:
            if label in body:
                yield ctx.error(
                    (*place, label),
                    f"{label} here would reach "
                    + ("every object, the data Job too" if place[0] == "metadata" else "the pods")
                    + ": Kueue reads it on the training object only",
                    "kueue-labels",
                    "set spec.scheduling.kueue instead",
                    key=True,
                )


def _kueue_requests(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Kueue admits a job by what its pods request (limits where no request is set); a cpu or
    memory the spec leaves out is paddlegen's default request (spec/model.py DEFAULT_REQUESTS),
    and the queue's quota is charged that: reported once where the resources are (or would
    be) set, naming the roles that take them from there."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    found: dict[FieldPath, tuple[list[str], list[str]]] = {}
    for role, body in roles.items():
        resources = role_value(ctx.spec, body, "resources", {})
        given = {**resources.get("limits", {}), **resources.get("requests", {})}
        missing = [name for name in DEFAULT_REQUESTS if name not in given]
        if not missing:
            continue
        if "resources" in body:
            place: FieldPath = ("spec", role, "resources")
        else:
            place = ("spec", "resources") if "resources" in ctx.spec else ("spec",)
        found.setdefault(place, ([], missing))[0].append(role)
    several = len(WORKLOADS[ctx.workload].roles) > 1
    for place, (which, missing) in found.items():
        defaults = ", ".join(f"{name} {DEFAULT_REQUESTS[name]}" for name in missing)
        pods = f"the {', '.join(which)} pods" if several else "the pods"
        yield ctx.error(
            place,
            f"Kueue charges the queue's quota what the pods request, and {pods} request "
            f"paddlegen's default {defaults}: the spec gives none",
            "kueue-requests",
            "set resources.requests (or limits) for " + " and ".join(missing),
            key=True,
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


# --- what the API server refuses (or warns about) in the rendered objects -------------------

# YAML's printable characters (YAML 1.2 c-printable). Go's YAML reader, which reads the body of a
# server-side apply, refuses any other raw character ("control characters are not allowed"), and
# JSON, which kubectl sends, leaves DEL, the C1 controls and U+FFFE/U+FFFF raw. PyYAML refuses
# the same characters raw in a spec file; escaped ("\x01") they load, and this rule refuses them.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _character_kind(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return "a C0 control character"
    if code == 0x7F:
        return "the control character DEL"
    if code < 0xA0:
        return "a C1 control character"
    if 0xD800 <= code < 0xE000:
        return "a lone surrogate"
    return "a noncharacter"


def _unprintable(text: str) -> str:
    """What the message says of the characters of ``text`` YAML cannot hold ("" if none)."""
    found = _NOT_PRINTABLE.findall(text)
    if not found:
        return ""
    more = len(found) - 1
    return f"U+{ord(found[0]):04X} ({_character_kind(found[0])})" + (
        f" and {more} more such character{'s' if more > 1 else ''}" if more else ""
    )


def _control_characters(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Every string that reaches a manifest (the metadata and the spec, but not the image build
    settings), and every mapping key, holds only characters YAML can hold."""
    hint = "remove it: a manifest may hold tabs, line breaks and printable characters only"

    def walk(node: Any, path: FieldPath) -> Iterator[Diagnostic]:
        if path == ("spec", "build"):
            return  # paddlegen dockerfile's input, never rendered into a manifest
        if isinstance(node, str):
            what = _unprintable(node)
            if what:
                yield ctx.error(
                    path,
                    f"the value holds {what}, which the API server refuses: a server-side "
                    "apply sends YAML, which cannot hold it",
                    "control-character",
                    hint,
                )
        elif isinstance(node, dict):
            for key, value in node.items():
                what = _unprintable(key)
                if what:
                    yield ctx.error(
                        (*path, key),
                        f"the key holds {what}, which the API server refuses: a server-side "
                        "apply sends YAML, which cannot hold it",
                        "control-character",
                        hint,
                        key=True,
                    )
                yield from walk(value, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, (*path, i))

    for section in ("metadata", "spec"):
        yield from walk(ctx.data.get(section), (section,))


def _container_places(ctx: _Ctx, key: str) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """Where the spec sets a container field ``key``: spec-wide and per role, as written, and
    in each init container and sidecar."""
    if key in ctx.spec:
        yield ("spec",), ctx.spec
    for role, body in ctx.roles():
        if key in body:
            yield ("spec", role), body
    for place, container in ctx.once(_init_containers):
        if key in container:
            yield place, container


def _init_containers(ctx: _Ctx) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """Every init container and sidecar the spec gives, spec-wide and per role, with its place."""
    for base, body in [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]:
        for key in CONTAINER_LISTS:
            for i, container in enumerate(body.get(key, [])):
                yield (*base, key, i), container


def _resource_lists(ctx: _Ctx) -> Iterator[tuple[FieldPath, str, Any]]:
    """(path, resource name, quantity) of every request and limit the spec sets."""
    for place, section in _container_places(ctx, "resources"):
        for kind in ("requests", "limits"):
            for name, quantity in section["resources"].get(kind, {}).items():
                yield (*place, "resources", kind, name), name, quantity


_BYTE_RESOURCES = ("memory", "ephemeral-storage")
# The API server reads quantities in thousandths, in a 64-bit integer: past this it overflows,
# and calls a whole number of bytes (or devices) fractional.
_MAX_MILLI_WHOLE = (2**63 - 1) // 1000
_MAX_INT64 = 2**63 - 1


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _fractional_bytes(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Byte quantities are whole bytes: the API server warns about fractional ones (memory,
    ephemeral-storage, a claim's storage) and Kubernetes rounds them up."""
    places: list[tuple[FieldPath, Any, str]] = [
        (path, quantity, name)
        for path, name, quantity in ctx.once(_resource_lists)
        if name in _BYTE_RESOURCES or _is_hugepages(name)
    ]
    if "shm" in ctx.spec:
        places.append((("spec", "shm"), ctx.spec["shm"], "shm"))
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        sized = any(s in volume for s in _SIZED_SOURCES)
        if sized and "capacity" in volume and server_value(volume["capacity"]) <= _MAX_INT64:
            # (larger, it is a volume-capacity error)
            places.append((("spec", "volumes", i, "capacity"), volume["capacity"], "capacity"))
        size = volume.get("emptyDir", {}).get("sizeLimit")
        if size is not None:
            places.append((("spec", "volumes", i, "emptyDir", "sizeLimit"), size, "sizeLimit"))
    for path, quantity, what in places:
        value = server_value(quantity)
        text = spelling(quantity)
        if value.denominator != 1:
            hint = "write whole bytes, e.g. 512Mi or 2G"
            if text.endswith("m"):
                hint = "'m' means thousandths, not mega: " + hint
            up = -(-value.numerator // value.denominator)
            yield ctx.error(
                path,
                f"{what} '{text}' is not a whole number of bytes: the API server warns, "
                f"and Kubernetes rounds it up to {up}",
                "quantity-fractional-bytes",
                hint,
                severity="warning",
            )
        elif value > _MAX_MILLI_WHOLE:
            yield ctx.error(
                path,
                f"{what} '{text}' is more bytes than the API server counts exactly (at most "
                f"{_MAX_MILLI_WHOLE}, about 8 PiB): past that its thousandths overflow, and it "
                "may call the value fractional",
                "quantity-fractional-bytes",
                "use a size the cluster can hold",
                severity="warning",
            )


def _is_native(name: str) -> bool:
    """A resource in Kubernetes' own namespace (no domain, or a kubernetes.io one)."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """An extended resource (nvidia.com/gpu): a domain of its own, not a quota's 'requests.'."""
    return not _is_native(name) and not name.startswith("requests.")


def _overcommits(name: str) -> bool:
    """Whether a request may be below the limit (helper.IsOvercommitAllowed)."""
    return _is_native(name) and not _is_hugepages(name)


_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _resource_names(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A container can ask only for cpu, memory, ephemeral-storage, hugepages-<size> and
    resources with a domain (ValidateContainerResourceName)."""
    for path, name, _ in ctx.once(_resource_lists):
        if "/" not in name and name not in _CONTAINER_RESOURCES and not _is_hugepages(name):
            problem = f"'{name}' is not a resource a container can ask for"
            hint = (
                "use cpu, memory, ephemeral-storage, hugepages-<page size>, or a resource "
                "with a domain such as nvidia.com/gpu"
            )
        elif name.startswith("requests."):
            problem = f"'{name}' is a quota's name for a resource, not the resource itself"
            hint = f"use '{name.removeprefix('requests.')}'"
        elif len("requests." + name.split("/")[0]) > 253:
            problem = f"the domain of '{name[:40]}...' is longer than 244 characters"
            hint = "Kubernetes counts quotas of it as 'requests.<domain>', which must fit 253"
        else:
            continue
        yield ctx.error(path, problem, "resource-name", hint, key=True)


def _resource_quantities(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Extended resources count whole devices; hugepages come in whole pages."""
    for path, name, quantity in ctx.once(_resource_lists):
        value = server_value(quantity)
        text = spelling(quantity)
        if _is_extended(name) and value.denominator != 1:
            yield ctx.error(
                path,
                f"{name} '{text}' is not a whole number: an extended resource counts devices",
                "resource-quantity",
                "use a whole number such as 1 or 8",
            )
        elif _is_extended(name) and value > _MAX_MILLI_WHOLE:
            yield ctx.error(
                path,
                f"{name} '{text}' is more than the API server counts exactly (at most "
                f"{_MAX_MILLI_WHOLE}): past that its thousandths overflow, and it may refuse "
                "the value as not a whole number",
                "resource-quantity",
                "use a whole number such as 1 or 8",
            )
        elif _is_hugepages(name):
            page_text = name.removeprefix("hugepages-")
            try:
                page = server_value(page_text)
            except InvalidValueError:
                page = Fraction(0)
            if page <= 0 or page.denominator != 1:
                yield ctx.error(
                    path,
                    f"'{name}' names no page size: '{page_text}' is not a whole, positive quantity",
                    "resource-quantity",
                    "name the node's page size, e.g. hugepages-2Mi or hugepages-1Gi",
                    key=True,
                )
            elif math.ceil(value) % page:
                yield ctx.error(
                    path,
                    f"{name} '{text}' is not a whole number of {page_text} pages",
                    "resource-quantity",
                    f"use a multiple of {page_text}",
                )


def _role_resources(
    ctx: _Ctx,
) -> Iterator[tuple[FieldPath, dict[str, Any], FieldPath, int]]:
    """Each distinct (resources, gpus) pair the pods get, with where each is set: a role's own
    resources replace the spec's, and its gpus override the spec's."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    seen: set[tuple[FieldPath, FieldPath]] = set()
    for role, body in roles.items():
        where: FieldPath = ("spec", role) if "resources" in body else ("spec",)
        gpus_at: FieldPath = ("spec", role, "gpus") if "gpus" in body else ("spec", "gpus")
        if (where, gpus_at) in seen:
            continue
        seen.add((where, gpus_at))
        resources = role_value(ctx.spec, body, "resources", {})
        yield (*where, "resources"), resources, gpus_at, role_value(ctx.spec, body, "gpus", 0)


def _gpus_override(ctx: _Ctx) -> Iterator[Diagnostic]:
    """gpus writes the nvidia.com/gpu limit, over any limit resources gives it."""
    for where, resources, gpus_at, gpus in _role_resources(ctx):
        limit = resources.get("limits", {}).get(GPU_RESOURCE)
        if gpus and limit is not None and server_value(limit) != gpus:
            yield ctx.error(
                (*where, "limits", GPU_RESOURCE),
                f"this limit is replaced by {format_path(gpus_at)[2:]}: {gpus}, which "
                f"sets the {GPU_RESOURCE} limit",
                "gpus-override",
                "set the number of GPUs in one place",
                severity="warning",
            )


def _gpus_at(ctx: _Ctx) -> Iterator[tuple[FieldPath, int]]:
    """Each place a pod's GPU count is set, with the count: a role's own gpus, else the spec's
    (once, for every role without its own)."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    seen: set[FieldPath] = set()
    for role, body in roles.items():
        at: FieldPath = ("spec", role, "gpus") if "gpus" in body else ("spec", "gpus")
        if at not in seen:
            seen.add(at)
            yield at, role_value(ctx.spec, body, "gpus", 0)


def _gpu_shm(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A container runtime gives /dev/shm 64 MiB: NCCL's intra-node transport and the data
    loaders' worker processes, which pass batches through shared memory, outgrow it on a GPU
    pod and fail with a bus error or 'No space left on device'."""
    gpu_pods = [(at, gpus) for at, gpus in _gpus_at(ctx) if gpus]  # most specs have none
    if (
        not gpu_pods
        or ctx.spec.get("shm")
        or any(
            _mount_point(volume["mountPath"]) == "/dev/shm"
            for volume in ctx.spec.get("volumes", [])
        )
    ):
        return
    for at, gpus in gpu_pods:
        yield ctx.error(
            at,
            f"pods with {gpus} GPU{'s' if gpus != 1 else ''} and no /dev/shm but the "
            "container runtime's 64 MiB: NCCL and data loader workers outgrow it (a bus "
            "error, or 'No space left on device')",
            "gpu-shm",
            f"set spec.shm, e.g. shm: {4 * gpus}Gi (4Gi per GPU; its pages count against "
            "the memory limit)",
            severity="warning",
        )


# Beyond these a spec is more likely a typo than a job (README "Silencing a rule"): the
# largest GPU nodes have 16 GPUs (DGX-2, a2-megagpu-16g; 8 is common), and a role of more than
# 1000 pods is past what one job plausibly runs on one cluster (Kubernetes is tested up to 5000
# nodes; 1000 trainers of 8 GPUs are 8000 GPUs).
MAX_PLAUSIBLE_GPUS = 16
MAX_PLAUSIBLE_REPLICAS = 1000


def _implausible_size(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Replicas and GPUs the schema allows (up to 10000 and 64) but no real job has."""
    places: list[tuple[FieldPath, int]] = [(("spec", "gpus"), ctx.spec.get("gpus", 0))]
    for role, body in ctx.roles():
        places.append((("spec", role, "gpus"), body.get("gpus", 0)))
        replicas = body.get("replicas", 1)
        if replicas > MAX_PLAUSIBLE_REPLICAS:
            yield ctx.error(
                ("spec", role, "replicas"),
                f"{replicas} {role} pods: more than {MAX_PLAUSIBLE_REPLICAS}, beyond the "
                "largest training jobs on Kubernetes",
                "implausible-size",
                "check the number; if it is meant, silence the rule for this field",
                severity="warning",
            )
    for at, gpus in places:
        if gpus > MAX_PLAUSIBLE_GPUS:
            yield ctx.error(
                at,
                f"{gpus} GPUs per pod: more than {MAX_PLAUSIBLE_GPUS}, the most the largest "
                "GPU nodes have (8 is common): the pods would stay Pending",
                "implausible-size",
                "check the number; a pod runs on one node, so spread GPUs over more replicas",
                severity="warning",
            )


def _requests_within_limits(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A request is at most its limit; a resource that cannot be overcommitted (an extended
    resource, hugepages) has a limit, and its request equals it (validateResourceRequirements)."""
    said: set[tuple[FieldPath, str]] = set()
    own = [
        ((*place, "resources"), container["resources"], (), 0)
        for place, container in ctx.once(_init_containers)
        if "resources" in container
    ]
    for where, resources, gpus_at, gpus in [*_role_resources(ctx), *own]:
        limits: dict[str, tuple[Any, str]] = {
            name: (quantity, "") for name, quantity in resources.get("limits", {}).items()
        }
        if gpus:
            limits[GPU_RESOURCE] = (gpus, f" (from {format_path(gpus_at)[2:]})")
        for name, quantity in resources.get("requests", {}).items():
            path: FieldPath = (*where, "requests", name)
            text = spelling(quantity)
            if name not in limits:
                if _overcommits(name):
                    continue
                message = (
                    f"{name} has a request but no limit: it cannot be overcommitted, so "
                    "its limit must be set (equal to the request)"
                )
                hint = f"set limits['{name}'] instead: the request defaults to the limit"
            else:
                limit, source = limits[name]
                asked, allowed = server_value(quantity), server_value(limit)
                if not _overcommits(name) and asked != allowed:
                    message = (
                        f"the {name} request '{text}' differs from its limit "
                        f"'{spelling(limit)}'{source}: {name} cannot be overcommitted, "
                        "so the two must be equal"
                    )
                    hint = "set only the limit: the request defaults to it"
                elif asked > allowed:
                    message = (
                        f"the {name} request '{text}' is more than its limit "
                        f"'{spelling(limit)}'{source}"
                    )
                    hint = "lower the request or raise the limit"
                else:
                    continue
            if (path, message) not in said:
                said.add((path, message))
                yield ctx.error(path, message, "request-limit", hint)


_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_RESOURCE_FIELDS = tuple(
    f"{kind}.{r}" for kind in ("limits", "requests") for r in _CONTAINER_RESOURCES
)
_BYTE_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
_QUALIFIED_NAME = re.compile(
    r"^(?:(?P<prefix>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*)/)?"
    r"(?P<name>[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)$"
)


def _is_qualified_name(text: str) -> bool:
    match = _QUALIFIED_NAME.match(text)
    if not match:
        return False
    return len(match["name"]) <= 63 and len(match["prefix"] or "") <= 253


def _field_path_problem(field_path: str) -> str:
    """Why the API server refuses ``field_path`` in an env fieldRef ("" if it does not)."""
    if field_path.endswith("']") and "['" in field_path and not field_path.startswith("['"):
        path, _, key = field_path[:-2].partition("['")
        if path not in ("metadata.labels", "metadata.annotations"):
            return f"'{path}' takes no ['key'] (only metadata.labels and metadata.annotations do)"
        if not _is_qualified_name(key.lower() if path == "metadata.annotations" else key):
            return f"'{key}' is not a label or annotation key"
        return ""
    if field_path in (*_FIELD_PATHS, "spec.host"):
        return ""
    return f"'{field_path}' is not a pod field env can read"


def _divisor_problem(resource: str, divisor: Any) -> str:
    """Why the API server refuses ``divisor`` for ``resource`` ("" if it does not): it compares
    the divisor's canonical spelling, so 1024 is not 1Ki and 1e3 is not 1k."""
    if server_value(divisor) == 0:
        return ""  # an unset divisor: 1
    spelled = canonical(divisor)
    kind = resource.partition(".")[2]
    if kind == "cpu":
        allowed: tuple[str, ...] = ("1m", "1")
    elif kind in ("memory", "ephemeral-storage") or kind.startswith("hugepages-"):
        allowed = _BYTE_DIVISORS
    else:
        return ""
    if spelled in allowed:
        return ""
    read = f" (the API server reads it as '{spelled}')" if spelled != spelling(divisor) else ""
    return (
        f"divisor '{spelling(divisor)}'{read} is not one of {', '.join(allowed)}, "
        f"the divisors of {kind}"
    )


def _env_downward_api(ctx: _Ctx) -> Iterator[Diagnostic]:
    """fieldRef and resourceFieldRef name what the API server lets env read, in its units."""
    for place, section in _container_places(ctx, "env"):
        for i, entry in enumerate(section["env"]):
            source = entry.get("valueFrom", {})
            here: FieldPath = (*place, "env", i, "valueFrom")
            if "fieldRef" in source:
                ref = source["fieldRef"]
                version = ref.get("apiVersion") or "v1"
                if version != "v1":
                    yield ctx.error(
                        (*here, "fieldRef", "apiVersion"),
                        f"fieldRef apiVersion '{version}' is not v1, the only version of pods",
                        "env-downward-api",
                        "leave apiVersion out",
                    )
                problem = _field_path_problem(ref["fieldPath"])
                if problem:
                    yield ctx.error(
                        (*here, "fieldRef", "fieldPath"),
                        problem,
                        "env-downward-api",
                        "one of " + ", ".join(_FIELD_PATHS) + ", metadata.labels['KEY'] "
                        "or metadata.annotations['KEY']",
                    )
            if "resourceFieldRef" in source:
                ref = source["resourceFieldRef"]
                resource = ref["resource"]
                known = resource in _RESOURCE_FIELDS or resource.startswith(
                    ("limits.hugepages-", "requests.hugepages-")
                )
                if not known:
                    yield ctx.error(
                        (*here, "resourceFieldRef", "resource"),
                        f"'{resource}' is not a resource env can read",
                        "env-downward-api",
                        "one of " + ", ".join(_RESOURCE_FIELDS) + " or "
                        "limits.hugepages-<size>, requests.hugepages-<size>",
                    )
                if "divisor" in ref:
                    problem = _divisor_problem(resource, ref["divisor"])
                    if problem:
                        yield ctx.error(
                            (*here, "resourceFieldRef", "divisor"),
                            problem,
                            "env-downward-api",
                            "leave divisor out for 1",
                        )


_LABEL_VALUE = re.compile(r"^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _tolerations(ctx: _Ctx) -> Iterator[Diagnostic]:
    """Tolerations as the API server takes them (ValidateTolerations): a key is a label key;
    an empty key needs operator Exists (it matches every taint); Exists takes no value, Equal
    (the default) a label value; tolerationSeconds only with effect NoExecute."""
    for place, section in _container_places(ctx, "tolerations"):
        for i, toleration in enumerate(section["tolerations"]):
            here: FieldPath = (*place, "tolerations", i)
            key = toleration.get("key", "")
            operator = toleration.get("operator", "Equal")
            value = toleration.get("value", "")
            if key and not _is_qualified_name(key):
                yield ctx.error(
                    (*here, "key"),
                    f"toleration key '{key}' is not a taint key ([prefix/]name: letters, digits, "
                    "'-', '_' and '.', starting and ending with a letter or digit)",
                    "toleration",
                )
            if not key and operator != "Exists":
                yield ctx.error(
                    (*here, "operator") if "operator" in toleration else here,
                    "a toleration without a key matches every taint, so its operator must be "
                    f"Exists, not {operator}",
                    "toleration",
                    "set operator: Exists, or name the taint's key",
                )
            if operator == "Exists" and value:
                yield ctx.error(
                    (*here, "value"),
                    f"operator Exists matches any value: the value '{value}' must be left out",
                    "toleration",
                )
            elif operator == "Equal" and not (len(value) <= 63 and _LABEL_VALUE.match(value)):
                yield ctx.error(
                    (*here, "value"),
                    f"toleration value '{value}' is not a taint value (at most 63 letters, "
                    "digits, '-', '_' and '.', starting and ending with a letter or digit)",
                    "toleration",
                )
            if "tolerationSeconds" in toleration and toleration.get("effect") != "NoExecute":
                yield ctx.error(
                    (*here, "tolerationSeconds"),
                    "tolerationSeconds needs effect NoExecute: only a NoExecute taint evicts "
                    "after a while",
                    "toleration",
                    "set effect: NoExecute, or drop tolerationSeconds",
                )


_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def _env_key_refs(ctx: _Ctx) -> Iterator[Diagnostic]:
    """secretKeyRef and configMapKeyRef name a key a Secret or ConfigMap can hold
    (IsConfigMapKey)."""
    for place, section in _container_places(ctx, "env"):
        for i, entry in enumerate(section["env"]):
            for source in ("secretKeyRef", "configMapKeyRef"):
                ref = entry.get("valueFrom", {}).get(source)
                if ref is None:
                    continue
                key = ref["key"]
                if not _CONFIG_KEY.match(key) or len(key) > 253:
                    problem = (
                        "holds only letters, digits, '-', '_' and '.' (at most 253 characters)"
                    )
                elif key.startswith(".."):
                    problem = "does not start with '..'"
                elif key == ".":
                    problem = "is not '.'"
                else:
                    continue
                yield ctx.error(
                    (*place, "env", i, "valueFrom", source, "key"),
                    f"'{key}' is not a key a Secret or ConfigMap can hold: a key {problem}",
                    "env-key-ref",
                )


# Fields of a topology spread constraint newer than PaddleFlow's PaddleJob CRD (v0.3.5, whose pod
# template has maxSkew, topologyKey, whenUnsatisfiable and labelSelector only): its structural
# schema prunes them.
_NOT_IN_PADDLEFLOW_CRD = ("minDomains", "matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy")


def _topology_spread(ctx: _Ctx) -> Iterator[Diagnostic]:
    """What the API server refuses in topologySpreadConstraints that the schema cannot see
    (validateTopologySpreadConstraints, ValidateLabelSelector): two constraints with the same
    topologyKey and whenUnsatisfiable, minDomains without DoNotSchedule, matchLabelKeys
    without a labelSelector or with a key it names, values that do not fit the operator; and
    what PaddleFlow's CRD would silently drop."""
    for place, section in _container_places(ctx, "topologySpreadConstraints"):
        seen: dict[tuple[str, str], int] = {}
        base: FieldPath = (*place, "topologySpreadConstraints")
        for i, constraint in enumerate(section["topologySpreadConstraints"]):
            here: FieldPath = (*base, i)
            pair = (constraint["topologyKey"], constraint["whenUnsatisfiable"])
            if pair in seen:
                yield ctx.error(
                    (*here, "topologyKey"),
                    f"topologyKey '{pair[0]}' with whenUnsatisfiable {pair[1]} is already "
                    f"constrained at {format_path((*base, seen[pair]))}",
                    "topology-spread",
                    "merge the two into one constraint",
                )
            seen.setdefault(pair, i)
            if "minDomains" in constraint and pair[1] != "DoNotSchedule":
                yield ctx.error(
                    (*here, "minDomains"),
                    f"minDomains needs whenUnsatisfiable DoNotSchedule, not {pair[1]}: only "
                    "DoNotSchedule counts domains",
                    "topology-spread",
                    "set whenUnsatisfiable: DoNotSchedule, or drop minDomains",
                )
            for key in _NOT_IN_PADDLEFLOW_CRD if ctx.workload == "paddlejob" else ():
                if key in constraint:
                    yield ctx.error(
                        (*here, key),
                        f"the PaddleFlow PaddleJob (v0.3.5) pod template has no {key}: the API "
                        "server would drop it, and the constraint would not hold",
                        "topology-spread",
                        "spread with maxSkew, topologyKey, whenUnsatisfiable and labelSelector",
                    )
            selector = constraint.get("labelSelector", {})
            yield from _selector_values(ctx, (*here, "labelSelector"), selector)
            if "matchLabelKeys" in constraint and "labelSelector" not in constraint:
                yield ctx.error(
                    (*here, "matchLabelKeys"),
                    "matchLabelKeys narrows labelSelector, and the constraint has none",
                    "topology-spread",
                    "add a labelSelector, e.g. matchLabels: {app.kubernetes.io/instance: <name>}",
                )
            selected = {*selector.get("matchLabels", {})}
            selected |= {e["key"] for e in selector.get("matchExpressions", [])}
            for j, key in enumerate(constraint.get("matchLabelKeys", [])):
                if key in selected:
                    yield ctx.error(
                        (*here, "matchLabelKeys", j),
                        f"'{key}' is in labelSelector too: the API server refuses a key in both",
                        "topology-spread",
                        "keep it in one of them",
                    )


def _selector_values(ctx: _Ctx, where: FieldPath, selector: dict[str, Any]) -> Iterator[Diagnostic]:
    """In and NotIn compare with at least one value; Exists and DoesNotExist take none."""
    for i, requirement in enumerate(selector.get("matchExpressions", [])):
        operator, values = requirement["operator"], requirement.get("values", [])
        compares = operator in ("In", "NotIn")
        if compares == bool(values):
            continue
        yield ctx.error(
            (*where, "matchExpressions", i, *(() if compares else ("values",))),
            f"operator {operator} "
            + ("needs at least one value" if compares else "looks at the key alone: no values"),
            "topology-spread",
            "add values: [...]" if compares else "drop values",
        )


def _pods(ctx: _Ctx) -> Iterator[tuple[str, dict[str, list[tuple[FieldPath, dict[str, Any]]]]]]:
    """Each role's pods: the init containers and sidecars they run (a role's own list, else
    the spec's), each with its place in the spec."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    for role, body in roles.items():
        lists = {}
        for key in CONTAINER_LISTS:
            base: FieldPath = ("spec", role, key) if key in body else ("spec", key)
            given = body.get(key, ctx.spec.get(key, []))
            lists[key] = [((*base, i), container) for i, container in enumerate(given)]
        yield role, lists


def _container_names(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A pod's containers have names of their own (validateInitContainers, Kubernetes v1.37.2
    pkg/apis/core/validation/validation.go:3944-3950): not the training container's, nor an
    init container's that the operator adds to every pod."""
    if not ctx.once(_init_containers):
        return  # the training container alone
    workload = WORKLOADS[ctx.workload]
    reserved = {TRAINING_CONTAINER: "the training container's"}
    reserved |= dict.fromkeys(
        workload.operator_init_containers,
        f"the init container the {workload.title} operator adds to every pod",
    )
    said: set[FieldPath] = set()
    for _, lists in _pods(ctx):
        seen: dict[str, FieldPath] = {}
        for place, container in [*lists["sidecars"], *lists["initContainers"]]:
            name = container["name"]
            if name in reserved and (*place, "name") not in said:
                said.add((*place, "name"))
                yield ctx.error(
                    (*place, "name"),
                    f"name '{name}' is {reserved[name]}",
                    "container-name",
                    "choose another name",
                )
            elif name in seen:
                # at the role's own entry when a role's list meets the spec's: it makes the clash
                first, later = sorted((seen[name], place), key=len)
                if (*later, "name") not in said:
                    said.add((*later, "name"))
                    yield ctx.error(
                        (*later, "name"),
                        f"name '{name}' is already taken by {format_path(first)}: the "
                        "containers of a pod have names of their own",
                        "container-name",
                        "choose another name",
                    )
            seen.setdefault(name, place)


def _container_mounts(ctx: _Ctx) -> Iterator[Diagnostic]:
    """An init container or sidecar mounts spec volumes, each path once (ValidateVolumeMounts,
    Kubernetes v1.37.2 pkg/apis/core/validation/validation.go:3177-3195)."""
    volumes = {v["name"]: v for v in ctx.spec.get("volumes", [])}
    for place, container in ctx.once(_init_containers):
        paths: dict[str, int] = {}
        for i, mount in enumerate(container.get("volumeMounts", [])):
            here: FieldPath = (*place, "volumeMounts", i)
            volume = volumes.get(mount["name"])
            if volume is None:
                yield ctx.error(
                    (*here, "name"),
                    f"no volume named '{mount['name']}' in spec.volumes",
                    "volume-reference",
                    "defined: " + (", ".join(volumes) or "none"),
                )
                continue
            path = _mount_point(mount.get("mountPath", volume["mountPath"]))
            if path in paths:
                yield ctx.error(
                    (*here, "mountPath") if "mountPath" in mount else here,
                    f"{path} is already mounted by "
                    f"{format_path((*place, 'volumeMounts', paths[path]))}",
                    "volume-unique",
                    "give it a mountPath of its own",
                )
            paths.setdefault(path, i)


def _paddlejob_sidecars(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A workload whose object cannot carry native sidecars refuses them where they are set."""
    why = WORKLOADS[ctx.workload].no_sidecars
    places = [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]
    given = [base for base, body in places if body.get("sidecars")]
    if not why or not given:
        return
    able = [w for w in WORKLOADS.values() if not w.no_sidecars and "sidecars" not in w.unsupported]
    # an operator's first: the same shape of job
    names = [w.name for w in sorted(able, key=lambda w: w.scheduling_policy is None)]
    hint = f"use workload {', '.join(names[:-1])} or {names[-1]} for sidecars, or make it an "
    hint += "init container that exits"
    for base in given:
        yield ctx.error((*base, "sidecars"), why, "paddlejob-sidecar-pruned", hint, key=True)


def _training_ports(ctx: _Ctx) -> dict[tuple[int, str], str]:
    """(containerPort, protocol) -> name of the ports the workload gives the training
    container (workloads/kubeflow_paddlejob, workloads/distributed_job ports)."""
    if ctx.workload == "kubeflow-paddlejob":
        port = ctx.spec.get("kubeflow", {}).get("port", KubeflowSettings().port)
        return {(port, "TCP"): "master"}
    if ctx.workload == "distributed-job":
        settings = {**vars(DISTRIBUTED_DEFAULTS), **ctx.spec.get("distributed", {})}
        count = settings["portsNum"] + settings["portsNumSparse"]
        return {(settings["port"] + i, "TCP"): f"jobport{i}" for i in range(count)}
    return {}


def _sidecar_ports(ctx: _Ctx) -> Iterator[Diagnostic]:
    """The containers of a pod share its network: a sidecar's port is no other container's
    (two cannot listen on one; the API server warns about a name or number declared twice,
    Kubernetes v1.37.2 pkg/api/pod/warnings.go:300-350), and a probe names a port of its own
    sidecar (the kubelet finds a named port in the container's ports alone)."""
    if not ctx.once(_init_containers):
        return  # no sidecar
    training = _training_ports(ctx)
    said: set[FieldPath] = set()
    for _, lists in _pods(ctx):
        # what each port number (with its protocol) and name is already
        taken: dict[Any, str] = {}
        for (given, protocol), name in training.items():
            taken[(given, protocol)] = f"the training container's port '{name}'"
            taken[name] = f"the training container's port {given}"
        for place, sidecar in lists["sidecars"]:
            for i, port in enumerate(sidecar.get("ports", [])):
                here: FieldPath = (*place, "ports", i)
                number = (port["containerPort"], port.get("protocol", "TCP"))
                for field, value, what in (
                    ("containerPort", number, f"{number[0]}/{number[1]}"),
                    ("name", port.get("name"), f"name '{port.get('name')}'"),
                ):
                    if value is None:
                        continue
                    if value in taken and (*here, field) not in said:
                        said.add((*here, field))
                        yield ctx.error(
                            (*here, field),
                            f"port {what} is already {taken[value]}: the containers of a pod "
                            "share its network",
                            "container-port",
                            "use another port",
                        )
                    taken.setdefault(value, f"declared at {format_path(here)}")
            yield from _probe_ports(ctx, place, sidecar)


def _probe_ports(ctx: _Ctx, place: FieldPath, sidecar: dict[str, Any]) -> Iterator[Diagnostic]:
    own = [p["name"] for p in sidecar.get("ports", []) if "name" in p]
    for probe in ("startupProbe", "livenessProbe"):
        for handler in ("httpGet", "tcpSocket"):
            port = sidecar.get(probe, {}).get(handler, {}).get("port")
            if isinstance(port, str) and port not in own:
                yield ctx.error(
                    (*place, probe, handler, "port"),
                    f"port '{port}' names no port of this sidecar, and the kubelet looks for "
                    "it there: the probe would fail",
                    "container-port",
                    "its ports: " + (", ".join(own) or "none") + "; or give the number",
                )


def _host_paths(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A hostPath names its directory without '..' (validatePathNoBacksteps)."""
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        path = volume.get("hostPath", {}).get("path")
        if path is not None and ".." in path.split("/"):
            yield ctx.error(
                ("spec", "volumes", i, "hostPath", "path"),
                f"hostPath '{path}' steps up with '..', which the API server refuses",
                "host-path",
                "write the directory without '..'",
            )


def _image_whitespace(ctx: _Ctx) -> Iterator[Diagnostic]:
    """An image starts and ends with a visible character: the API server refuses pods whose
    image does not (the Job is accepted, its controller can create no pod)."""
    for place, image in ctx.once(_images):
        if image != image.strip():
            yield ctx.error(
                (*place, "image"),
                f"image '{image}' has leading or trailing whitespace: the API server refuses "
                "the pods",
                "image-whitespace",
                "remove the whitespace",
            )


def _volume_server_rules(ctx: _Ctx) -> Iterator[Diagnostic]:
    """What the API server refuses, or warns about, in the PersistentVolumes and claims that
    volumes become."""
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        here: FieldPath = ("spec", "volumes", i)
        sources = [s for s in VOLUME_SOURCES if s in volume]
        if len(sources) != 1:
            continue  # volume-source says so
        source = sources[0]
        modes = volume.get("accessModes", [])
        if source in _SIZED_SOURCES and "ReadWriteOncePod" in modes and len(modes) > 1:
            yield ctx.error(
                (*here, "accessModes"),
                "ReadWriteOncePod cannot be combined with other access modes: the API server "
                "refuses the claim" + (" and the PersistentVolume" if source in PV_SOURCES else ""),
                "volume-access-mode",
                "keep ReadWriteOncePod alone, or drop it",
            )
        if source in _SIZED_SOURCES and "capacity" in volume:
            value = server_value(volume["capacity"])
            text = spelling(volume["capacity"])
            if value == 0:
                yield ctx.error(
                    (*here, "capacity"),
                    f"capacity '{text}' is zero: the API server wants a claim's storage "
                    "request (and a PersistentVolume's capacity) greater than zero",
                    "volume-capacity",
                    "for example capacity: 10Gi",
                )
            elif value > _MAX_INT64:
                yield ctx.error(
                    (*here, "capacity"),
                    f"capacity '{text}' is more bytes than Kubernetes can hold "
                    f"(at most {_MAX_INT64}, 8 EiB)",
                    "volume-capacity",
                    "for example capacity: 10Gi",
                )
        if source in PV_SOURCES and volume.get("reclaimPolicy") == "Recycle":
            cannot = (
                ", and Kubernetes recycles only NFS and hostPath volumes: the released "
                f"{source} volume would fail to recycle"
                if source == "cephfs"
                else ""
            )
            yield ctx.error(
                (*here, "reclaimPolicy"),
                "reclaimPolicy Recycle is deprecated (the API server warns about it): it "
                f"empties the volume with rm -rf for the next claim{cannot}",
                "nfs-recycle",
                "use Retain and clean up yourself, or a dynamic volume, which its StorageClass "
                "deletes",
                severity="warning",
            )


def _pv_binding(ctx: _Ctx) -> Iterator[Diagnostic]:
    """A PersistentVolume that nothing keeps for its claim: without a namespace it has no
    `claimRef`, and a class the spec names may be requested by other claims (without one,
    paddlegen gives the PV a class of its own: spec/model.py _own_class)."""
    if ctx.data.get("metadata", {}).get("namespace"):
        return
    for i, volume in enumerate(ctx.spec.get("volumes", [])):
        if "storageClassName" in volume and any(s in volume for s in PV_SOURCES):
            named = volume["storageClassName"]
            yield ctx.error(
                ("spec", "volumes", i, "storageClassName"),
                "without a namespace the PersistentVolume is not pre-bound to its claim "
                "(claimRef needs one), so any claim that requests storageClassName "
                f"'{named}'{' (no class)' if not named else ''} may bind it first",
                "pv-binding",
                "set metadata.namespace, and the PV is pre-bound; or leave storageClassName "
                "out, and the PV gets a class of its own that only its claim requests",
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
    _priority_class,
    _paddlejob_roles,
    _operator_env,
    _kubeflow_roles,
    _ignored_settings,
    _distributed_job,
    _host_port_nodes,
    _collective_job,
    _unsupported,
    _data_prep,
    _single_mount_volumes,
    _control_characters,
    _fractional_bytes,
    _resource_names,
    _resource_quantities,
    _gpus_override,
    _gpu_shm,
    _implausible_size,
    _requests_within_limits,
    _env_downward_api,
    _volume_server_rules,
    _pv_binding,
    _tolerations,
    _env_key_refs,
    _topology_spread,
    _host_paths,
    _image_whitespace,
    _container_names,
    _container_mounts,
    _paddlejob_sidecars,
    _sidecar_ports,
    _kueue,
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
    "paddlejob-min-available",
    "priority-class",
    "paddlejob-heter",
    "paddlejob-gloo",
    "paddlejob-elastic",
    "paddlejob-clean-pod-policy",
    "operator-env",
    "kubeflow-heter",
    "workload-setting",
    "distributed-roles",
    "distributed-required",
    "distributed-ports",
    "distributed-command",
    "distributed-env",
    "hostport-nodes",
    "collective-roles",
    "collective-command",
    "collective-restart",
    "collective-env",
    "collective-args",
    "workload-unsupported",
    "dataprep-layout",
    "volume-access-mode",
    "deprecated",
    "control-character",
    "quantity-fractional-bytes",
    "resource-name",
    "resource-quantity",
    "gpus-override",
    "gpu-shm",
    "implausible-size",
    "request-limit",
    "env-downward-api",
    "nfs-recycle",
    "pv-binding",
    "toleration",
    "env-key-ref",
    "host-path",
    "image-whitespace",
    "topology-spread",
    "container-name",
    "container-port",
    "paddlejob-sidecar-pruned",
    "kueue-workload",
    "kueue-labels",
    "kueue-data-prep",
    "kueue-requests",
    "kueue-runtime",
)
# The rules that guard what no job can be built without: a volume's one source, the volumes
# that settings name, the distributed image's volume and config folder. Silenced, they would
# leave paddlegen nothing it could render, so `ignore` entries and `--ignore` may not name them.
REQUIRED: tuple[str, ...] = ("volume-source", "volume-reference", "distributed-required")


def semantic_diagnostics(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Run every check on a spec that already passed the schema."""
    ctx = _Ctx(doc, workload)
    return sorted(d for check in CHECKS for d in check(ctx))
