"""`paddlegen import`: a pod template back to a spec role, its volumes and job-wide settings."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from paddlegen.spec.accelerators import ACCELERATORS
from paddlegen.spec.model import (
    DEFAULT_REQUESTS,
    recommended_labels,
)
from paddlegen.spec.network import MULTUS_NETWORKS
from paddlegen.workloads.base import GROUP_NAME, QUEUE_NAME, TRAINING_CONTAINER
from paddlegen.workloads.import_defaults import DEFAULT_GRACE, JOB_LABELS
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, strip_meta, take
from paddlegen.workloads.import_positions import FieldPath
from paddlegen.workloads.import_volumes import pod_volumes

RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
SECURITY_KEYS = ("runAsNonRoot", "runAsUser", "runAsGroup", "readOnlyRootFilesystem")
# What a pod's securityContext sets for every container that does not set its own.
POD_WIDE = ("runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile")


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
    accelerator: str | None = None  # what its gpus count (spec.accelerator)
    networks: list[str] = field(default_factory=list)  # its Multus networks, comma form
    # what became of the token the pods mounted because the template left
    # automountServiceAccountToken unset: "kept" (their own account's), "dropped" (the
    # default account's), "" (it was set, or another object decides)
    default_token: str = ""


def pod(
    template: dict[str, Any],
    ctx: Context,
    where: str,
    *,
    peer_discovery: bool = False,
    training: str = TRAINING_CONTAINER,
    dns_policy: str | None = None,
    whole: bool = True,
    at: FieldPath = (),
) -> Pod:
    """Map a pod template (popping what is used) to a role and its volumes. With
    ``peer_discovery`` (distributed-job) the pods talk to the API server, with a token.
    ``training`` names the training container the workload renders (trainjob's is `node`),
    ``dns_policy`` the dnsPolicy it gives the pods itself (None: Kubernetes' default).
    ``whole``: the template is all the pods had (not a patch over a runtime's), so a field
    it leaves unset ran with Kubernetes' default. ``at``: where the object holds the template,
    for the notes on its fields."""
    meta = template.setdefault("metadata", {})
    strip_meta(meta, ctx)
    annotations = meta.get("annotations", {})
    queue = annotations.pop(QUEUE_NAME, None)
    volcano = annotations.pop(GROUP_NAME, None) is not None or queue is not None
    networks = _networks(annotations)
    own = _pod_meta(meta, ctx)
    if not meta:
        template.pop("metadata")
    spec = template.setdefault("spec", {})
    containers = (*at, "spec", "containers")
    container, index = _training_container(spec, training, ctx, where, containers)
    # what the job's securityContext gives every container, before _security takes it apart:
    # the training container's but the capabilities it adds, which are its own
    container_security = copy.deepcopy(container.get("securityContext"))
    take({"s": container_security}, "s", "capabilities", "add")
    name = container.pop("name", training)
    if name != training:
        ctx.note(
            COSMETIC,
            where,
            f"container '{name}' is named 'paddle' (operators find it by name)",
            at=(*containers, index, "name"),
        )
    role: dict[str, Any] = {
        key: container.pop(key)
        for key in ("image", "imagePullPolicy", "command", "args", "workingDir", "env", "envFrom")
        if key in container
    }
    resources, accelerator = _resources(container)
    role.update(resources)
    role.update(
        {key: spec.pop(key) for key in ("nodeSelector", "tolerations", "affinity") if key in spec}
    )
    role.update(own)
    default_token = _default_token(spec) if whole and not peer_discovery else ""
    if default_token == "kept":
        role["automountServiceAccountToken"] = True
    role.update(_pod_settings(spec))
    role.update(_token_and_dns(spec, peer_discovery, dns_policy))
    if spec.get("schedulerName") == "volcano":  # any other scheduler stays, and is listed
        take(spec, "schedulerName")
        volcano = True
    security = _security(container, spec)
    volumes, shm = pod_volumes(container, spec, ctx, where, (*at, "spec", "volumes"))
    role.update(_init_containers(spec, volumes, container_security, ctx, where))
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
        accelerator,
        networks,
        default_token,
    )


def _networks(annotations: dict[str, Any]) -> list[str]:
    """spec.networks from the Multus annotation in its comma-separated form (Multus reads a
    value with '[', '{' or '"' as JSON, which stays an annotation: multus-cni v4.3.0
    pkg/k8sclient/k8sclient.go:231-255)."""
    value = annotations.get(MULTUS_NETWORKS)
    if not isinstance(value, str) or not value.strip() or any(c in value for c in '[{"'):
        return []
    del annotations[MULTUS_NETWORKS]
    return [entry.strip() for entry in value.split(",")]


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


def _default_token(spec: dict[str, Any]) -> str:
    """What becomes of the token a pod spec without automountServiceAccountToken mounted
    (Kubernetes mounts it unless the service account says otherwise), where paddlegen's pods
    would mount none: an account of the pods' own is there to call the API server, so its
    token is kept; the namespace's default account's, which every pod naming no account
    shares (default-account-token), is dropped."""
    if "automountServiceAccountToken" in spec:
        return ""
    return "dropped" if spec.get("serviceAccountName") in (None, "", "default") else "kept"


def _token_and_dns(
    spec: dict[str, Any], peer_discovery: bool, dns_policy: str | None
) -> dict[str, Any]:
    """automountServiceAccountToken, dnsPolicy and dnsConfig, as the pod spec gives them. A
    token is the spec's unless it is paddlegen's default, none (with ``peer_discovery`` it is
    kept: authoring/import_derived.py leaves it out of the spec where the workload gives it
    anyway). The workload's own ``dns_policy`` goes without saying; ClusterFirst, Kubernetes'
    default, is left in place (a cosmetic note), as the API server writes it into every batch
    Job's pods."""
    out: dict[str, Any] = {}
    if "automountServiceAccountToken" in spec:  # a boolean: import-shape refuses others
        token = take(spec, "automountServiceAccountToken")
        if token or peer_discovery:
            out["automountServiceAccountToken"] = token
    policy = spec.get("dnsPolicy")
    if policy is not None and policy == dns_policy:
        take(spec, "dnsPolicy")
    elif policy is not None and (policy, dns_policy) != ("ClusterFirst", None):
        out["dnsPolicy"] = spec.pop("dnsPolicy")
    if "dnsConfig" in spec:
        out["dnsConfig"] = spec.pop("dnsConfig")
    return out


def _training_container(
    spec: dict[str, Any], training: str, ctx: Context, where: str, at: FieldPath
) -> tuple[dict[str, Any], int]:
    """The container a spec describes (``training``, else the first), and its index. A spec's
    pods run that one container alone: every other container is dropped, each with a note at
    it (``at``: the containers' field; init containers and native sidecars are carried over,
    _init_containers)."""
    containers = spec.get("containers") or [{}]  # none: the spec's validation says so
    chosen: dict[str, Any] = next(
        (c for c in containers if c.get("name") == training), containers[0]
    )
    for i, other in enumerate(containers):
        if other is not chosen:
            ctx.note(
                LOSSY,
                where,
                f"container {_describe(other)} is not carried over: the spec's pods run "
                "one container, the training container; a native sidecar (spec.sidecars) "
                "runs beside it, and ends with it",
                at=(*at, i),
            )
            containers[i] = {}  # in place: what is left of the training container keeps its index
    return chosen, next(i for i, c in enumerate(containers) if c is chosen)


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


def _resources(container: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The role's resources and gpus, and the accelerator gpus count (the first known one
    the limits name; None: none)."""
    resources = container.pop("resources", {})
    limits = resources.get("limits", {})
    accelerator = next((name for name in ACCELERATORS if name in limits), None)
    gpus = None if accelerator is None else take(resources, "limits", accelerator)
    if accelerator and resources.get("requests", {}).get(accelerator) == gpus:
        take(resources, "requests", accelerator)  # Kubernetes copies the limit anyway
    if resources == {"requests": DEFAULT_REQUESTS}:
        resources = {}  # what paddlegen renders when the spec sets none
    out: dict[str, Any] = {"resources": resources} if resources else {}
    if gpus is not None:  # a whole number to the API; else the spec's validation says so
        out["gpus"] = int(gpus) if str(gpus).isdigit() else gpus
    return out, accelerator


def _security(container: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """spec.security from the securityContext the training container runs with: its own, else
    the pod's (which applies to every container). restricted: false unless the container had
    paddlegen's whole restricted profile, so the spec does not restrict what ran unrestricted."""
    added = take(container, "securityContext", "capabilities", "add")
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
    if added:
        security["capabilities"] = {"add": added}
    return security
