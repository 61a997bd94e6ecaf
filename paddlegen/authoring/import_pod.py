"""`paddlegen import`, part one: pod templates and storage back to spec fields.

Every mapper *pops* what it carries over from a copy of the input object, so whatever is left
at the end is exactly what did not make it into the spec, and is listed (importer.py).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from paddlegen.authoring.import_defaults import DEFAULT_GRACE, JOB_LABELS
from paddlegen.authoring.import_positions import FieldPath
from paddlegen.errors import Diagnostic
from paddlegen.spec.model import (
    CEPHFS_CSI_DRIVER,
    DEFAULT_REQUESTS,
    EFS_CSI_DRIVER,
    EFS_MOUNT_OPTIONS,
    GPU_RESOURCE,
    MANAGED_BY,
    recommended_labels,
)
from paddlegen.workloads.base import GROUP_NAME, QUEUE_NAME, TRAINING_CONTAINER

EFS_SERVER = re.compile(r"^(fs-[0-9a-f]+)\.efs\.([a-z0-9-]+)\.amazonaws\.com$")
EFS_HANDLE = re.compile(r"^fs-[0-9a-f]+(:/[^:]*)?$")
RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
SECURITY_KEYS = ("runAsNonRoot", "runAsUser", "runAsGroup", "readOnlyRootFilesystem")
# What a pod's securityContext sets for every container that does not set its own.
POD_WIDE = ("runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile")
ARGOCD_PREFIX = "argocd.argoproj.io/"  # sync annotations paddlegen writes itself


def take(obj: Any, *keys: str | int, default: Any = None) -> Any:
    """Remove and return ``obj[k1][k2]...``, pruning parents left empty."""
    if not keys:
        return default
    head, rest = keys[0], keys[1:]
    try:
        child = obj[head]
    except (KeyError, IndexError, TypeError):
        return default
    if not rest:
        return obj.pop(head)
    value = take(child, *rest, default=default)
    if isinstance(child, (dict, list)) and not child:
        obj.pop(head)
    return value


def leftovers(obj: Any, prefix: FieldPath = ()) -> list[tuple[FieldPath, Any]]:
    """``(path, value)`` of every leaf still in ``obj`` (emptied containers carry nothing; a
    list of scalars is one leaf)."""
    if isinstance(obj, (dict, list)) and not obj:
        return []
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leftovers(v, (*prefix, k))]
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return [leaf for i, v in enumerate(obj) for leaf in leftovers(v, (*prefix, i))]
    return [(prefix, obj)]


def dotted(path: FieldPath) -> str:
    """``path`` as notes write it: ``spec.template.spec.containers[0].ports``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


# What a note says about the rendered objects: they run the same as the input (cosmetic: a
# server-set field, a default made explicit, a name paddlegen derives) or differently (lossy: a
# pod, container, volume, command, env, resource, scheduling or placement setting lost or changed).
NoteKind = Literal["cosmetic", "lossy"]
COSMETIC: NoteKind = "cosmetic"
LOSSY: NoteKind = "lossy"
_RULES = {COSMETIC: ("info", "import-note"), LOSSY: ("warning", "import-lossy")}


@dataclass(frozen=True)
class Note:
    """One thing import did not carry over as it was. ``where`` starts with the object's
    ``Kind/name`` (a role may follow); ``file`` is the input that held the object."""

    kind: NoteKind
    where: str
    message: str
    file: str = ""
    # The field of the object the note is about, and where the input file holds it.
    at: FieldPath = ()
    line: int = 0
    col: int = 0

    @property
    def label(self) -> str:
        return self.where.partition(" ")[0]

    @property
    def lossy(self) -> bool:
        return self.kind == LOSSY

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def diagnostic(self) -> Diagnostic:
        """The note as a finding: lossy ones warn (import-lossy), cosmetic ones inform."""
        severity, rule = _RULES[self.kind]
        return Diagnostic(
            self.file,
            self.line,
            self.col,
            severity=severity,
            path=self.where,
            message=self.message,
            rule=rule,
        )


@dataclass
class Context:
    """State one import shares: the job's identity, notes, and PVs/PVCs not yet used."""

    name: str
    namespace: str | None
    labels: dict[str, str]  # the job's own labels (recommended ones removed)
    annotations: dict[str, str]
    pvs: dict[str, dict[str, Any]]
    pvcs: dict[str, dict[str, Any]]
    notes: list[Note] = field(default_factory=list)
    # PVs and PVCs turned into volumes; what is left of them is reported like everything else.
    consumed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    claims: dict[str, tuple[dict[str, Any], str | None]] = field(default_factory=dict)
    # spec volume name -> (claim name, PV name) as the input named them
    storage_names: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # an operator's schedulingPolicy.minResources: derived, compared with what paddlegen sums
    gang_min_resources: dict[str, Any] | None = None
    data_priority: str | None = None  # the data Job's priorityClassName

    def note(self, kind: NoteKind, where: str, message: str, at: FieldPath = ()) -> None:
        """A note on the object ``where`` names; ``at``: the field of it the note is about,
        as the input held it (positioned in the input's file)."""
        self.notes.append(Note(kind, where, message, at=at))


def strip_meta(meta: dict[str, Any], ctx: Context) -> None:
    """Remove the labels and annotations the spec regenerates on every object."""
    labels = meta.get("labels", {})
    if labels.get("app.kubernetes.io/managed-by") == MANAGED_BY:
        for key, value in recommended_labels(ctx.name).items():
            if labels.get(key) == value:
                labels.pop(key)
    for table, mine in ((labels, ctx.labels), (meta.get("annotations", {}), ctx.annotations)):
        for key in [
            k for k in table if k in mine and table[k] == mine[k] or k.startswith(ARGOCD_PREFIX)
        ]:
            table.pop(key)
    for key in ("labels", "annotations"):
        if key in meta and not meta[key]:
            meta.pop(key)


@dataclass
class Pod:
    """What one pod template carries over: a role, its volumes and job-wide settings."""

    role: dict[str, Any]
    volumes: list[dict[str, Any]]
    container: dict[str, Any]  # what is left of the training container, for the workload
    spec: dict[str, Any]  # what is left of the pod spec, for the workload
    shm: Any = None
    volcano: bool = False
    restart_policy: str | None = None
    security: dict[str, Any] = field(default_factory=dict)
    queue: str | None = None  # the queue Volcano's group for a batch Job takes


def pod(
    template: dict[str, Any],
    ctx: Context,
    where: str,
    *,
    peer_discovery: bool = False,
    training: str = TRAINING_CONTAINER,
) -> Pod:
    """Map a pod template (popping what is used) to a role and its volumes. With
    ``peer_discovery`` (distributed-job) the pods talk to the API server, with a token.
    ``training`` names the training container the workload renders (trainjob's is `node`)."""
    meta = template.setdefault("metadata", {})
    strip_meta(meta, ctx)
    annotations = meta.get("annotations", {})
    queue = annotations.pop(QUEUE_NAME, None)
    volcano = annotations.pop(GROUP_NAME, None) is not None or queue is not None
    own = _pod_meta(meta, ctx)
    if not meta:
        template.pop("metadata")
    spec = template.setdefault("spec", {})
    container = _training_container(spec, training, ctx, where)
    # what the job's securityContext gives every container, before _security takes it apart
    container_security = copy.deepcopy(container.get("securityContext"))
    name = container.pop("name", training)
    if name != training:
        ctx.note(
            COSMETIC, where, f"container '{name}' is named 'paddle' (operators find it by name)"
        )
    role: dict[str, Any] = {
        key: container.pop(key)
        for key in ("image", "imagePullPolicy", "command", "args", "workingDir", "env", "envFrom")
        if key in container
    }
    role.update(_resources(container))
    role.update(
        {key: spec.pop(key) for key in ("nodeSelector", "tolerations", "affinity") if key in spec}
    )
    role.update(own)
    role.update(_pod_settings(spec))
    if spec.get("schedulerName") == "volcano":  # any other scheduler stays, and is listed
        take(spec, "schedulerName")
        volcano = True
    security = _security(container, spec)
    volumes, shm = _volumes(container, spec, ctx, where)
    role.update(_init_containers(spec, volumes, container_security, ctx, where))
    if take(spec, "automountServiceAccountToken") not in (None, peer_discovery):
        ctx.note(
            LOSSY,
            where,
            "automountServiceAccountToken follows the workload (a token only "
            "for distributed-job's peer discovery)",
        )
    return Pod(
        role,
        volumes,
        container,
        spec,
        shm,
        volcano,
        take(spec, "restartPolicy"),
        security,
        queue,
    )


def _pod_meta(meta: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """podLabels and podAnnotations: what the pod template carries beyond the object's own
    (strip_meta removed those). The labels the Job controller sets, and paddlegen's
    recommended ones (which win over podLabels), stay and are listed."""
    reserved = {*JOB_LABELS, *recommended_labels(ctx.name)}
    labels = meta.get("labels", {})
    own: dict[str, Any] = {}
    mine = {k: labels.pop(k) for k in list(labels) if k not in reserved}
    if mine:
        own["podLabels"] = mine
    if meta.get("annotations"):
        own["podAnnotations"] = meta.pop("annotations")
    for key in ("labels", "annotations"):
        if key in meta and not meta[key]:
            meta.pop(key)
    return own


def _pod_settings(spec: dict[str, Any]) -> dict[str, Any]:
    """The pod settings of spec.model.POD_FIELDS that sit in the pod spec."""
    if spec.get("serviceAccount") == spec.get("serviceAccountName"):
        take(spec, "serviceAccount")  # the deprecated alias the API server fills in
    out: dict[str, Any] = {
        key: spec.pop(key)
        for key in (
            "serviceAccountName",
            "priorityClassName",
            "runtimeClassName",
            "topologySpreadConstraints",
        )
        if key in spec
    }
    if spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE) != DEFAULT_GRACE:
        # Kubernetes' default, which every pod read back has, is left to it (a cosmetic note).
        out["terminationGracePeriodSeconds"] = spec.pop("terminationGracePeriodSeconds")
    secrets = spec.get("imagePullSecrets", [])
    if secrets and all(isinstance(s, dict) and set(s) == {"name"} for s in secrets):
        out["imagePullSecrets"] = [s["name"] for s in spec.pop("imagePullSecrets")]
    return out


def _training_container(
    spec: dict[str, Any], training: str, ctx: Context, where: str
) -> dict[str, Any]:
    """The container a spec describes (``training``, else the first). A spec's pods run that
    one container alone: every other container is dropped, each with a note (init containers
    and native sidecars are carried over, _init_containers)."""
    containers = spec.get("containers") or [{}]  # none: the spec's validation says so
    chosen = next((c for c in containers if c.get("name") == training), containers[0])
    for i, other in enumerate(containers):
        if other is not chosen:
            ctx.note(
                LOSSY,
                where,
                f"container {_describe(other)} is not carried over: the spec's pods run "
                "one container, the training container; a native sidecar (spec.sidecars) "
                "runs beside it, and ends with it",
            )
            containers[i] = {}  # in place: what is left of the training container keeps its index
    return chosen


# What a spec's init container or sidecar carries (spec.model CONTAINER_LISTS), beyond its
# mounts, securityContext, restartPolicy and probes, which _init_containers maps itself.
_CONTAINER_FIELDS = (
    "name",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "resources",
)
_SIDECAR_FIELDS = ("ports",)
_PROBES = ("startupProbe", "livenessProbe")
_PROBE_FIELDS = ("exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "periodSeconds",
                 "timeoutSeconds", "failureThreshold")  # fmt: skip
# The API server's defaults in a probe (import_defaults._POD_DEFAULTS has them too): left in
# place, so that the report calls them defaults.
PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                  "failureThreshold": 3}  # fmt: skip


def _init_containers(
    spec: dict[str, Any],
    volumes: list[dict[str, Any]],
    security: dict[str, Any] | None,
    ctx: Context,
    where: str,
) -> dict[str, list[dict[str, Any]]]:
    """spec initContainers and sidecars (init containers with restartPolicy Always) from the
    pod's init containers; what a spec container cannot hold stays in place, and is listed.
    The render starts every sidecar first: a sidecar after an init container moves up."""
    out: dict[str, list[dict[str, Any]]] = {"sidecars": [], "initContainers": []}
    mounted = {v["name"]: v for v in volumes}
    for init in spec.get("initContainers", []):
        described = _describe(init)
        sidecar = init.get("restartPolicy") == "Always"
        if sidecar:
            take(init, "restartPolicy")
            if out["initContainers"]:
                ctx.note(
                    LOSSY,
                    where,
                    f"sidecar {described} now starts before init container "
                    f"'{out['initContainers'][0].get('name')}': paddlegen starts every sidecar "
                    "first",
                )
        entry = {key: init.pop(key) for key in _CONTAINER_FIELDS if key in init}
        if sidecar:
            entry.update({key: init.pop(key) for key in _SIDECAR_FIELDS if key in init})
            entry.update(_probes(init))
        mounts = _container_mounts(init, mounted)
        if mounts:
            entry["volumeMounts"] = mounts
        _container_security(init, security, described, ctx, where)
        out["sidecars" if sidecar else "initContainers"].append(entry)
    return {key: found for key, found in out.items() if found}


def _probes(init: dict[str, Any]) -> dict[str, Any]:
    """A sidecar's probes, less the API server's defaults and what a spec probe cannot hold."""
    out = {}
    for key in _PROBES:
        probe = init.get(key)
        if not isinstance(probe, dict):
            continue
        mine = {k: probe.pop(k) for k in _PROBE_FIELDS if k in probe}
        for name, default in PROBE_DEFAULTS.items():
            if mine.get(name) == default:
                probe[name] = mine.pop(name)
        http = mine.get("httpGet", {})
        if isinstance(http, dict):
            extra = {k: http.pop(k) for k in list(http) if k not in ("path", "port", "scheme")}
            if http.get("scheme") == "HTTP":
                extra["scheme"] = http.pop("scheme")
            if extra:
                probe["httpGet"] = extra
        out[key] = mine
        if not probe:
            init.pop(key)
    return out


def _container_mounts(
    init: dict[str, Any], volumes: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The mounts of the spec's volumes, where and as the training container's when they are
    (the spec's defaults); a mount of a volume the spec lacks stays in place."""
    out = []
    left = []
    for mount in init.get("volumeMounts", []):
        volume = volumes.get(mount.get("name"))
        if volume is None or "mountPath" not in mount:
            left.append(mount)
            continue
        entry = {"name": mount.pop("name")}
        path = mount.pop("mountPath")
        if path != volume["mountPath"]:
            entry["mountPath"] = path
        read_only = bool(mount.pop("readOnly", False))
        if read_only != bool(volume.get("readOnly")):
            entry["readOnly"] = read_only
        if "subPath" in mount:
            entry["subPath"] = mount.pop("subPath")
        out.append(entry)
        if mount:  # mountPropagation, subPathExpr...: listed
            left.append(mount)
    if left:
        init["volumeMounts"] = left
    else:
        init.pop("volumeMounts", None)
    return out


def _container_security(
    init: dict[str, Any],
    security: dict[str, Any] | None,
    described: str,
    ctx: Context,
    where: str,
) -> None:
    """Every container of the render gets the training container's securityContext: an init
    container that had the same one loses nothing; one that had none is noted, and another
    one stays in place, and is listed."""
    own = init.get("securityContext")
    if own == security:
        init.pop("securityContext", None)
    elif own is None:
        ctx.note(
            LOSSY,
            where,
            f"init container {described} ran without a securityContext; it now gets the "
            f"training container's, {json.dumps(security)}",
        )


def _describe(container: dict[str, Any]) -> str:
    return f"'{container.get('name')}' ({container.get('image')})"


def _resources(container: dict[str, Any]) -> dict[str, Any]:
    resources = container.pop("resources", {})
    gpus = take(resources, "limits", GPU_RESOURCE)
    if gpus is not None and resources.get("requests", {}).get(GPU_RESOURCE) == gpus:
        take(resources, "requests", GPU_RESOURCE)  # Kubernetes copies the limit anyway
    if resources == {"requests": DEFAULT_REQUESTS}:
        resources = {}  # what paddlegen renders when the spec sets none
    out: dict[str, Any] = {"resources": resources} if resources else {}
    if gpus is not None:  # a whole number to the API; else the spec's validation says so
        out["gpus"] = int(gpus) if str(gpus).isdigit() else gpus
    return out


def _security(container: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """spec.security from the securityContext the training container runs with: its own, else
    the pod's (which applies to every container). restricted: false unless the container had
    paddlegen's whole restricted profile, so the spec does not restrict what ran unrestricted."""
    own = container.get("securityContext", {})
    shared = spec.get("securityContext", {})
    effective = {**{k: v for k, v in shared.items() if k in POD_WIDE}, **own}

    def pop(key: str) -> Any:
        return take(container if key in own else spec, "securityContext", key)

    restricted = all(effective.get(k) == v for k, v in RESTRICTED.items())
    for key in RESTRICTED if restricted else ():
        pop(key)
    security: dict[str, Any] = {} if restricted else {"restricted": False}
    security.update({key: pop(key) for key in SECURITY_KEYS if key in effective})
    if "fsGroup" in shared:
        security["fsGroup"] = take(spec, "securityContext", "fsGroup")
    return security


def _volumes(
    container: dict[str, Any], spec: dict[str, Any], ctx: Context, where: str
) -> tuple[list[dict[str, Any]], Any]:
    mounts = {m.get("name"): m for m in container.get("volumeMounts", [])}
    # the first init container or sidecar mount of each volume
    others: dict[str, dict[str, Any]] = {}
    for init in spec.get("initContainers", []):
        for mount in init.get("volumeMounts", []):
            if isinstance(mount, dict) and mount.get("mountPath"):
                others.setdefault(str(mount.get("name")), mount)
    volumes: list[dict[str, Any]] = []
    shm = None
    _drop_repeated_volumes(spec, ctx, where)
    for i, volume in reversed(list(enumerate(spec.get("volumes", [])))):
        mount = mounts.get(volume.get("name"))
        if mount is None and volume.get("name") in others:
            entry = _borrowed_volume(volume, others[volume["name"]], ctx, where)
            if entry is not None:
                volumes.insert(0, entry)
                spec["volumes"].pop(i)
            continue
        if mount is None:
            continue  # not mounted into the training container: dropped below
        empty = volume.get("emptyDir", {})
        if (
            mount.get("mountPath") == "/dev/shm"
            and empty.get("medium") == "Memory"
            and "sizeLimit" in empty
            and len(volume) == 2
        ):
            shm = empty["sizeLimit"]
        else:
            source = _source(volume, ctx)
            if source is None:
                continue
            # no mountPath (a runtime patch's template is not typed): the spec's to refuse
            entry = {"name": volume["name"], "mountPath": mount.get("mountPath"), **source}
            if mount.get("readOnly"):
                entry["readOnly"] = True
            volumes.insert(0, entry)
        for key in ("name", "mountPath", "readOnly"):
            mount.pop(key, None)
        if not mount:  # a subPath or mountPropagation stays, and is listed
            container["volumeMounts"].remove(mount)
        spec["volumes"].pop(i)
    for volume in spec.pop("volumes", []):
        _drop_volume(volume, mounts.get(volume.get("name")), container, ctx, where)
    if not container.get("volumeMounts", True):
        container.pop("volumeMounts")
    return volumes, shm


def _borrowed_volume(
    volume: dict[str, Any], mount: dict[str, Any], ctx: Context, where: str
) -> dict[str, Any] | None:
    """A volume only init containers or sidecars mount, as a spec volume (at the first one's
    mountPath), or None when it has no spec form: the spec mounts every volume into the
    training container too, which is noted."""
    source = _source(volume, ctx)
    if source is None:
        return None
    entry = {"name": volume["name"], "mountPath": mount["mountPath"], **source}
    if mount.get("readOnly"):
        entry["readOnly"] = True
    ctx.note(
        LOSSY,
        where,
        f"volume '{volume['name']}' is now also mounted into the training container, at "
        f"{mount['mountPath']}: the spec mounts every volume into it (only init containers or "
        "sidecars did)",
    )
    return entry


def _drop_repeated_volumes(spec: dict[str, Any], ctx: Context, where: str) -> None:
    """Every volume of a name an earlier one has (the API refuses them: "Duplicate value"),
    with a note: one volume of a name, one mount."""
    if "volumes" not in spec:
        return
    seen: set[Any] = set()
    kept = []
    for volume in spec["volumes"]:
        name = volume.get("name")
        if name in seen:
            ctx.note(
                LOSSY, where, f"volume '{name}' is given twice: the second is not carried over"
            )
        else:
            kept.append(volume)
        seen.add(name)
    spec["volumes"] = kept


def _drop_volume(
    volume: dict[str, Any],
    mount: dict[str, Any] | None,
    container: dict[str, Any],
    ctx: Context,
    where: str,
) -> None:
    """One note for a pod volume the spec cannot carry, and its mount removed with it."""
    source = ", ".join(sorted(set(volume) - {"name"})) or "no source"
    if mount is None:
        reason = "the training container does not mount it"
    else:
        container["volumeMounts"].remove(mount)
        reason = f"mounted at {mount.get('mountPath')}, it has no spec volume form"
    ctx.note(
        LOSSY, where, f"volume '{volume.get('name')}' ({source}) is not carried over: {reason}"
    )


def _source(volume: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    """The spec volume fields for a pod volume, or None (left in place) if it has no spec form."""
    kinds = set(volume) - {"name"}
    if kinds in ({"hostPath"}, {"emptyDir"}, {"configMap"}, {"secret"}):
        return {k: volume[k] for k in kinds}
    claim = volume.get("persistentVolumeClaim", {})
    if kinds != {"persistentVolumeClaim"} or not set(claim) <= {"claimName", "readOnly"}:
        return None
    name = claim["claimName"]
    if name not in ctx.claims:
        ctx.claims[name] = _claim_source(name, ctx)
    source, pv_name = ctx.claims[name]
    ctx.storage_names.setdefault(volume["name"], (name, pv_name))
    return {**source, **({"readOnly": True} if claim.get("readOnly") else {})}


def _claim_source(name: str, ctx: Context) -> tuple[dict[str, Any], str | None]:
    """The volume source behind a claim: its PV's (nfs, efs, cephfs), dynamic, or the claim."""
    label = f"PersistentVolumeClaim/{name}"
    pvc = ctx.pvcs.get(name)
    if pvc is None:
        return {"claim": {"name": name}}, None
    spec = pvc.setdefault("spec", {})
    pv_name = spec.get("volumeName") or next(
        (
            n
            for n, pv in ctx.pvs.items()
            if pv.get("spec", {}).get("claimRef", {}).get("name") == name
        ),
        None,
    )
    only = next(iter(ctx.pvs.items())) if len(ctx.pvs) == 1 else None
    if pv_name is None and only is not None and _free_for(name, *only, ctx):
        pv_name = only[0]
        ctx.note(
            COSMETIC,
            label,
            f"bound to PersistentVolume/{pv_name}, the only one in the input (the "
            "cluster would match them by size and access mode)",
        )
    pv = ctx.pvs.get(pv_name or "")
    if pv is not None and _pv_kind(pv.get("spec", {})) is None:
        return {"claim": {"name": name}}, None  # a PV source paddlegen cannot make: both listed
    ctx.consumed.append((label, ctx.pvcs.pop(name)))
    take(spec, "volumeName")
    if spec.get("volumeMode") == "Filesystem":
        take(spec, "volumeMode")  # the default
    requested = take(spec, "resources", "requests", "storage")
    modes, storage_class = take(spec, "accessModes"), take(spec, "storageClassName")
    if pv is None:
        dynamic = {"storageClassName": storage_class} if storage_class else {}
        return {
            "dynamic": dynamic,
            "capacity": requested,
            **({"accessModes": modes} if modes else {}),
        }, None
    source = _pv_source(pv_name or "", pv, ctx)
    for what, mine, theirs in (
        ("requests.storage", requested, source.get("capacity")),
        ("accessModes", modes, source.get("accessModes")),
        ("storageClassName", storage_class or None, source.get("storageClassName")),
    ):
        if mine is not None and mine != theirs:
            ctx.note(
                COSMETIC,
                label,
                f"{what} {json.dumps(mine)} differs from the PersistentVolume's "
                f"{json.dumps(theirs)}; the PersistentVolume's value serves both",
            )
    return source, pv_name


def _free_for(claim: str, pv_name: str, pv: dict[str, Any], ctx: Context) -> bool:
    """Whether the cluster could bind ``claim`` to the PV ``pv_name``: no other claim of the
    input names it (``volumeName``) and it is not pre-bound to another (``claimRef``)."""
    bound_to = pv.get("spec", {}).get("claimRef", {}).get("name")
    named = any(
        other != claim and pvc.get("spec", {}).get("volumeName") == pv_name
        for other, pvc in ctx.pvcs.items()
    )
    return not named and bound_to in (None, claim)


def _pv_kind(spec: dict[str, Any]) -> str | None:
    """The PV source paddlegen makes that ``spec`` has (nfs also for EFS over NFS; efs: a
    volume of the EFS CSI driver; csi: a static volume of the CephFS CSI driver, with every
    field paddlegen writes), or None."""
    for kind in ("nfs", "cephfs"):
        if isinstance(spec.get(kind), dict):
            return kind
    csi = spec.get("csi")
    if isinstance(csi, dict) and csi.get("driver") == EFS_CSI_DRIVER:
        # <fileSystemId>[:<path>]; an access point (fs-..::fsap-..) has no spec form
        plain = set(csi) <= {"driver", "volumeHandle", "readOnly"}
        return "efs" if plain and EFS_HANDLE.match(csi.get("volumeHandle", "")) else None
    if not isinstance(csi, dict) or csi.get("driver") != CEPHFS_CSI_DRIVER:
        return None
    attributes = csi.get("volumeAttributes", {})
    static = attributes.get("staticVolume") == "true"
    fields = all(attributes.get(k) for k in ("clusterID", "fsName", "rootPath"))
    return "csi" if static and fields and csi.get("nodeStageSecretRef", {}).get("name") else None


def _pv_source(name: str, pv: dict[str, Any], ctx: Context) -> dict[str, Any]:
    ctx.consumed.append((f"PersistentVolume/{name}", ctx.pvs.pop(name)))
    spec = pv["spec"]
    kind = _pv_kind(spec) or "nfs"
    out: dict[str, Any] = {}
    if kind == "csi":
        out["cephfs"] = _cephfs_csi(name, spec, ctx)
        fields = {"readOnly": take(spec, "csi", "readOnly")}
    elif kind == "efs":
        fs_id, _, path = take(spec, "csi", "volumeHandle").partition(":")
        take(spec, "csi", "driver")
        out["efs"] = {"fileSystemId": fs_id, "path": path or "/"}
        fields = {"readOnly": take(spec, "csi", "readOnly")}
    else:
        present = [k for k in ("server", "path", "monitors", "user", "readOnly") if k in spec[kind]]
        fields = {key: take(spec, kind, key) for key in present}
        secret = take(spec, kind, "secretRef", "name")
        secret_namespace = take(spec, kind, "secretRef", "namespace")
        efs = EFS_SERVER.match(fields["server"]) if kind == "nfs" else None
        if efs:
            out["efs"] = {"fileSystemId": efs[1], "region": efs[2], "path": fields.get("path", "/"),
                          "nfs": True}  # fmt: skip
        elif kind == "nfs":
            out["nfs"] = {"server": fields["server"], "path": fields["path"]}
        else:
            out["cephfs"] = {
                "inTree": True,
                **{k: fields[k] for k in ("monitors", "user", "path") if k in fields},
            }
            if secret:
                out["cephfs"]["secretName"] = secret
            if secret_namespace:
                out["cephfs"]["secretNamespace"] = secret_namespace
    if fields.get("readOnly"):
        out["readOnly"] = True
    out["capacity"] = take(spec, "capacity", "storage")
    out["accessModes"] = take(spec, "accessModes")
    if spec.get("volumeMode") == "Filesystem":
        take(spec, "volumeMode")
    policy = take(spec, "persistentVolumeReclaimPolicy")
    if policy != "Retain":
        out["reclaimPolicy"] = policy
    out["storageClassName"] = take(spec, "storageClassName") or None
    options = take(spec, "mountOptions")
    if not (out.get("efs", {}).get("nfs") and options == EFS_MOUNT_OPTIONS):
        out["mountOptions"] = options
    if spec.get("claimRef", {}).get("name"):
        take(spec, "claimRef")  # paddlegen binds the PV to its own claim
    return {k: v for k, v in out.items() if v is not None}


def _cephfs_csi(name: str, spec: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The cephfs fields of a static CephFS CSI volume (``_pv_kind`` checked they are there)."""
    take(spec, "csi", "driver")
    handle = take(spec, "csi", "volumeHandle")
    if handle != name:
        ctx.note(
            COSMETIC,
            f"PersistentVolume/{name}",
            f"volumeHandle {json.dumps(handle)} not kept: paddlegen uses the "
            "PersistentVolume's name as the handle, unique among the driver's volumes",
        )
    take(spec, "csi", "volumeAttributes", "staticVolume")
    out = {
        "clusterID": take(spec, "csi", "volumeAttributes", "clusterID"),
        "fsName": take(spec, "csi", "volumeAttributes", "fsName"),
        "secretName": take(spec, "csi", "nodeStageSecretRef", "name"),
        "path": take(spec, "csi", "volumeAttributes", "rootPath"),
    }
    namespace = take(spec, "csi", "nodeStageSecretRef", "namespace")
    if namespace and namespace != ctx.namespace:
        out["secretNamespace"] = namespace
    return out
