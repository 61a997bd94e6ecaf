"""Workload `distributed-job`'s importer: the legacy pserver/trainer image's batch Job."""

from __future__ import annotations

from typing import Any

from paddlegen.workloads.base import Spec
from paddlegen.workloads.distributed_job.settings import DISTRIBUTED_DEFAULTS
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, key_of, take
from paddlegen.workloads.import_pod import Pod, pod
from paddlegen.workloads.import_spec import (
    assemble,
    env_of,
    literal_env,
    take_env,
    take_gang_size,
    take_run,
)
from paddlegen.workloads.shared.import_launcher import gets_launcher_contract

# The legacy image's env and the distributed settings each comes from (see the template).
_DISTRIBUTED_ENV = {
    "TRAIN_CONFIG_DIR": ("trainConfigDir", str),
    "CONF_PADDLE_NIC": ("nic", str),
    "CONF_PADDLE_PORT": ("port", int),
    "CONF_PADDLE_PORTS_NUM": ("portsNum", int),
    "CONF_PADDLE_PORTS_NUM_SPARSE": ("portsNumSparse", int),
    "TRAINER_COUNT": ("trainerCount", int),
}


def is_distributed(job: dict[str, Any]) -> bool:
    """A batch Job of the classic pserver/trainer image (it reads CONF_PADDLE_* env), unless
    its pods get Paddle's launcher contract, which makes it a collective-job's."""
    legacy = any(e.get("name", "").startswith("CONF_PADDLE_") for e in env_of(job))
    return legacy and not gets_launcher_contract(job)


def distributed_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """The classic distributed batch Job: its pods, and its settings read back from the legacy
    image's env, ports and account."""
    body = obj.setdefault("spec", {})
    p = pod(
        body.setdefault("template", {}), ctx, where, peer_discovery=True, at=("spec", "template")
    )
    parallelism = body.get("parallelism", 1)
    take(body, "parallelism")
    if body.get("completions", parallelism) == parallelism:
        take(body, "completions")
    settings, job_path = _distributed(p, parallelism, ctx, where)
    spec = assemble("distributed-job", {"worker": (parallelism, p)}, ctx, where)
    volume = next((v["name"] for v in spec.get("volumes", []) if v["mountPath"] == job_path), None)
    spec["distributed"] = {**({"volume": volume} if volume else {}), **settings}
    if volume is None:
        ctx.note(
            LOSSY,
            where,
            "JOB_PATH is not the mountPath of any volume; set spec.distributed.volume",
        )
    take_run(spec, body)
    take_gang_size(obj, spec, ctx)
    return spec


def _distributed(
    p: Pod, replicas: int, ctx: Context, where: str
) -> tuple[dict[str, Any], str | None]:
    """The distributed settings (and JOB_PATH) read back from the legacy image's env, ports
    and account."""
    role: dict[str, Any] = p.role
    settings: dict[str, Any] = {}
    for name, (key, kind) in _DISTRIBUTED_ENV.items():
        value = literal_env(role, name, ctx, where)
        if value is not None:
            try:
                settings[key] = kind(value)
            except ValueError:
                ctx.note(LOSSY, where, f"env {name}={value!r} is not a number; dropped")
    if "trainerCount" not in settings:
        ctx.note(
            LOSSY,
            where,
            "TRAINER_COUNT was not set (the image's start script needs it); paddlegen sets 1",
        )
    job_path = literal_env(role, "JOB_PATH", ctx, where)
    for name, expected in (("JOB_NAME", ctx.name), ("CONF_PADDLE_GRADIENT_NUM", str(replicas))):
        value = literal_env(role, name, ctx, where)
        if value not in (None, expected):
            ctx.note(
                LOSSY, where, f"env {name}={value!r} becomes {expected!r} (paddlegen derives it)"
            )
    namespace = take_env(role, "JOB_NAMESPACE")
    if namespace and "value" in namespace:
        # The same value wherever the input named the namespace it runs in.
        same = namespace["value"] == ctx.namespace
        ctx.note(
            COSMETIC if same else LOSSY,
            where,
            f"env JOB_NAMESPACE={namespace['value']!r} now comes from the pod's namespace",
        )
    if role.get("command") == DISTRIBUTED_DEFAULTS.command:
        role.pop("command")
    settings["hostPorts"] = _ports(p.container, settings, ctx, where)
    if role.get("serviceAccountName") == ctx.name:
        role.pop("serviceAccountName")  # paddlegen creates it, with its Role and binding
    _drop_anti_affinity(role, ctx.name)
    return settings, job_path


def _ports(container: dict[str, Any], settings: dict[str, Any], ctx: Context, where: str) -> bool:
    """Whether the pods use hostPorts; the ports are popped when they are the derived ones."""
    first = settings.get("port", DISTRIBUTED_DEFAULTS.port)
    count = settings.get("portsNum", DISTRIBUTED_DEFAULTS.portsNum) + settings.get(
        "portsNumSparse", DISTRIBUTED_DEFAULTS.portsNumSparse
    )
    ports = container.get("ports", [])
    if not ports:
        # containerPorts without hostPorts only document the ports: the pods run the same.
        ctx.note(
            COSMETIC,
            where,
            f"no ports were declared; paddlegen declares {first}..{first + count - 1}"
            " as containerPorts (without hostPorts, as in the input)",
        )
        return False
    host = any("hostPort" in port for port in ports)
    derived = [
        {
            "name": f"jobport{i}",
            "containerPort": first + i,
            "protocol": "TCP",
            **({"hostPort": first + i} if host else {}),
        }
        for i in range(count)
    ]
    if [{"protocol": "TCP", **port} for port in ports] != derived:
        _note_ports(ports, derived, ctx, where)
    take(container, "ports")
    return host


def _note_ports(
    given: list[dict[str, Any]], derived: list[dict[str, Any]], ctx: Context, where: str
) -> None:
    """The input's ports next to the derived ones: lossy when the pods gain or lose a port (a
    hostPort more is one more to find free on every node), cosmetic when only names differ."""

    def key(port: dict[str, Any]) -> tuple[Any, Any, Any]:
        return port.get("containerPort"), port.get("hostPort"), port.get("protocol", "TCP")

    ours, theirs = {key(p) for p in derived}, {key(p) for p in given}
    kept = [str(p["containerPort"]) for p in derived if key(p) in theirs]
    added = [str(p["containerPort"]) for p in derived if key(p) not in theirs]
    lost = [_described_port(p) for p in given if key(p) not in ours]
    last = len(derived) - 1
    host = "with equal hostPorts" if "hostPort" in derived[0] else "without hostPorts"
    parts = [
        f"{', '.join(ports)} {what}"
        for ports, what in ((kept, "kept"), (added, "added"), (lost, "not carried over"))
        if ports
    ]
    ctx.note(
        LOSSY if added or lost else COSMETIC,
        where,
        f"ports {derived[0]['containerPort']}..{derived[last]['containerPort']} {host} "
        f"(jobport0..jobport{last}, from distributed.port, portsNum and portsNumSparse): "
        + (", ".join(parts) if added or lost else f"named jobport0..jobport{last}"),
    )


def _described_port(port: dict[str, Any]) -> str:
    protocol = port.get("protocol", "TCP")
    return (
        f"{port.get('containerPort')}"
        + (f"/{protocol}" if protocol != "TCP" else "")
        + (f" (hostPort {port['hostPort']})" if "hostPort" in port else "")
    )


def _drop_anti_affinity(role: dict[str, Any], name: str) -> None:
    """Remove the one-pod-per-node term paddlegen adds with hostPorts."""
    term = {
        "labelSelector": {"matchLabels": {"job-name": name}},
        "topologyKey": "kubernetes.io/hostname",
    }
    required = (
        role.get("affinity", {})
        .get("podAntiAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", [])
    )
    if term in required:
        required.remove(term)
        if not required:
            take(
                role,
                "affinity",
                "podAntiAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
            )


# distributed-job renders these for the image's peer discovery; importing them is a no-op.
RBAC = {
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}
_ROLE_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def derived(objects: list[dict[str, Any]], spec: Spec, ctx: Context) -> list[dict[str, Any]]:
    """The ServiceAccount, Role and RoleBinding of ``objects`` that distributed-job renders for
    its pods' account (Workload.derived_objects)."""
    account = spec.get("worker", {}).get("serviceAccountName", spec.get("serviceAccountName"))
    job = ctx.name
    return [o for o in objects if key_of(o) in RBAC and _rbac_is_derived(o, job, account or job)]


def _rbac_is_derived(obj: dict[str, Any], name: str, account: str) -> bool:
    """distributed-job's own ServiceAccount, Role and RoleBinding, which it regenerates (the
    binding's subject: ``account``, the pods'); fields that differ from what it regenerates
    stay in the object and are listed."""
    if obj["metadata"]["name"] != name or (obj["kind"] == "ServiceAccount" and account != name):
        return False
    if obj.get("rules") == _ROLE_RULES:
        take(obj, "rules")
    if obj.get("roleRef", {}).get("name") == name:
        take(obj, "roleRef")
    if all(
        s.get("kind") == "ServiceAccount" and s.get("name") == account
        for s in obj.get("subjects", [{}])
    ):
        take(obj, "subjects")
    return True
