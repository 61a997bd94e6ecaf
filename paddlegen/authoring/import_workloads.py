"""`paddlegen import`, part two: each workload's main object, and the data Job, back to a spec."""

from __future__ import annotations

import json
from typing import Any

from paddlegen.spec.model import (
    CONTAINER_LISTS,
    DATA_PREP_INHERITS,
    DISTRIBUTED_DEFAULTS,
    KUEUE_QUEUE_LABEL,
    ROLE_FIELDS,
    ROLE_NAMES,
    CollectiveSettings,
)
from paddlegen.workloads import collective_job as collective
from paddlegen.workloads import kubeflow_paddlejob, paddlejob
from paddlegen.workloads.base import GROUP_MIN_MEMBER, RUN_KEYS
from paddlegen.workloads.import_notes import COSMETIC, LOSSY, Context, take
from paddlegen.workloads.import_pod import Pod, pod
from paddlegen.workloads.import_positions import FieldPath

Spec = dict[str, Any]
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
    """A batch Job of the seeds' legacy pserver/trainer image (it reads CONF_PADDLE_* env)."""
    return any(e.get("name", "").startswith("CONF_PADDLE_") for e in _env_of(job))


def is_data_job(job: dict[str, Any]) -> bool:
    """A data-preparation Job of the seeds (it writes SPLIT_COUNT parts to OUT_DIR)."""
    return {"OUT_DIR", "SPLIT_COUNT"} <= {e.get("name") for e in _env_of(job)}


def _env_of(job: dict[str, Any]) -> list[dict[str, Any]]:
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


def _literal(role: dict[str, Any], name: str, ctx: Context, where: str) -> str | None:
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


def _run(spec: Spec, source: dict[str, Any]) -> None:
    run = {key: take(source, key) for key in RUN_KEYS if key in source}
    if run:
        spec["run"] = {**spec.get("run", {}), **run}


def batch_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A batch/v1 Job: an Indexed one with Paddle's launcher contract (collective-job), the
    seeds' distributed one (CONF_PADDLE_* env), else a single pod."""
    if is_collective(obj):
        return collective_job(obj, ctx, where)
    distributed = is_distributed(obj)
    body = obj.setdefault("spec", {})
    p = pod(body.setdefault("template", {}), ctx, where, peer_discovery=distributed)
    parallelism = body.get("parallelism", 1)
    if distributed:
        take(body, "parallelism")
        if body.get("completions", parallelism) == parallelism:
            take(body, "completions")
        settings, job_path = _distributed(p, parallelism, ctx, where)
    else:
        _one_pod(body, ctx, where)
    spec = assemble(
        "distributed-job" if distributed else "job",
        {"worker": (parallelism if distributed else 1, p)},
        ctx,
        where,
    )
    if distributed:
        volume = next(
            (v["name"] for v in spec.get("volumes", []) if v["mountPath"] == job_path), None
        )
        spec["distributed"] = {**({"volume": volume} if volume else {}), **settings}
        if volume is None:
            ctx.note(
                LOSSY,
                where,
                "JOB_PATH is not the mountPath of any volume; set spec.distributed.volume",
            )
    _run(spec, body)
    _gang_size(obj, spec, ctx)
    return spec


def _gang_size(obj: dict[str, Any], spec: Spec, ctx: Context) -> None:
    """The Job's annotation that sizes the PodGroup Volcano makes for its pods."""
    given = ctx.annotations.get(GROUP_MIN_MEMBER, "")
    if "scheduling" in spec and given.isdigit() and int(given) > 0:
        spec["scheduling"]["minAvailable"] = int(ctx.annotations.pop(GROUP_MIN_MEMBER))
        take(obj, "metadata", "annotations", GROUP_MIN_MEMBER)


def _one_pod(body: dict[str, Any], ctx: Context, where: str) -> None:
    """Workload job runs one pod without a completion index: a Job that runs more pods, or
    indexes them, becomes one pod all the same, with a note saying so.

    It does not become another workload: collective-job starts Paddle's launcher with its
    contract (an Indexed Job without PADDLE_MASTER is no such job); paddlejob and
    kubeflow-paddlejob need their operator installed and give the pods their rank in other
    variables (PADDLE_TRAINER_ID, not JOB_COMPLETION_INDEX); distributed-job is the legacy
    pserver/trainer image's contract. Each would run the pods differently too, and without
    saying so."""
    shape = {
        k: take(body, k) for k in ("parallelism", "completions", "completionMode") if k in body
    }
    parallelism = shape.get("parallelism", 1)
    total = shape.get("completions") or parallelism
    indexed = shape.get("completionMode") == "Indexed"
    if total == parallelism == 1 and not indexed:
        return  # one pod, as the workload runs it (NonIndexed is the default mode)
    at_once = min(parallelism, total)
    runs = f"{total} pod{'s' if total != 1 else ''}" + (
        f", {at_once} at a time" if at_once != total else ""
    )
    given = ", ".join(f"{k} {v}" for k, v in shape.items())
    ctx.note(
        LOSSY,
        where,
        f"{given}: the Job runs {runs}"
        + (" with a completion index each (JOB_COMPLETION_INDEX)" if indexed else "")
        + "; workload job runs exactly one, without an index. For several trainers use "
        "workload collective-job (an Indexed Job that runs Paddle's launcher, each pod's rank "
        "its index), or paddlejob or kubeflow-paddlejob, whose operators give each pod its "
        "rank, with spec.worker.replicas",
    )


def _distributed(
    p: Pod, replicas: int, ctx: Context, where: str
) -> tuple[dict[str, Any], str | None]:
    """The distributed settings (and JOB_PATH) read back from the legacy image's env, ports
    and account."""
    role: dict[str, Any] = p.role
    settings: dict[str, Any] = {}
    for name, (key, kind) in _DISTRIBUTED_ENV.items():
        value = _literal(role, name, ctx, where)
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
    job_path = _literal(role, "JOB_PATH", ctx, where)
    for name, expected in (("JOB_NAME", ctx.name), ("CONF_PADDLE_GRADIENT_NUM", str(replicas))):
        value = _literal(role, name, ctx, where)
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


def _scheduling_policy(
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
    scheduling = spec.setdefault("scheduling", {"scheduler": "volcano"})
    for theirs, mine in (
        ("minAvailable", "minAvailable"),
        ("queue", "queue"),
        ("priorityClass", "priorityClassName"),
    ):
        if theirs in policy:
            scheduling[mine] = take(policy, theirs)


def paddleflow_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A PaddleFlow PaddleJob (batch.paddlepaddle.org/v1)."""
    body = obj.setdefault("spec", {})
    # paddlegen's own Gloo endpoint (workloads/paddlejob gloo_env): derived, not the spec's
    gloo = {
        "name": "PADDLE_GLOO_HTTP_ENDPOINT",
        "value": f"{obj.get('metadata', {}).get('name')}-ps-0:{paddlejob.GLOO_PORT}",
    }
    for role in ("ps", "worker", "heter"):
        template_spec = body.get(role, {}).get("template", {}).get("spec", {})
        if template_spec.get("schedulerName") == "default-scheduler":
            # paddlegen writes it on every PaddleFlow pod that is not Volcano's
            # (workloads/paddlejob): nothing to carry over, nothing lost.
            take(template_spec, "schedulerName")
        _drop_coordinate_container(template_spec, ctx, f"{where} {role}")
        container = (template_spec.get("containers") or [{}])[0]
        if body.get("withGloo") and gloo in container.get("env", []):
            container["env"].remove(gloo)
            if not container["env"]:
                del container["env"]
    pods = {}
    for role in ("ps", "worker", "heter"):
        if role in body:
            # the template first: taking the replicas of a role that has nothing else drops it
            template = body[role].setdefault("template", {})
            replicas = take(body, role, "replicas", default=1)
            pods[role] = (replicas, pod(template, ctx, f"{where} {role}"))
    spec = assemble("paddlejob", pods, ctx, where)
    settings = {
        key: take(body, key)
        for key in ("cleanPodPolicy", "withGloo", "intranet", "elastic")
        if key in body
    }
    if settings:
        spec["paddlejob"] = settings
    if "schedulingPolicy" in body:
        _scheduling_policy(spec, body["schedulingPolicy"], ctx, where, "schedulingPolicy")
    return spec


def _drop_coordinate_container(pod_spec: dict[str, Any], ctx: Context, where: str) -> None:
    """The operator's own init container, where a copy of a pod put it in the template: the
    operator appends it to every pod itself (workloads/paddlejob COORDINATE_CONTAINER)."""
    inits = pod_spec.get("initContainers", [])
    for init in [c for c in inits if c.get("name") == paddlejob.COORDINATE_CONTAINER]:
        inits.remove(init)
        ctx.note(
            COSMETIC,
            where,
            f"init container '{paddlejob.COORDINATE_CONTAINER}' is the operator's: it adds "
            "it to every pod itself",
        )
    if "initContainers" in pod_spec and not inits:
        del pod_spec["initContainers"]


_KUBEFLOW_ROLES = {replica: role for role, replica in kubeflow_paddlejob.ROLES.items()}


def kubeflow_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """A Kubeflow training-operator PaddleJob (kubeflow.org/v1)."""
    body = obj.setdefault("spec", {})
    replica_specs = body.get("paddleReplicaSpecs", {})
    pods, policies = {}, set()
    for kind, role in _KUBEFLOW_ROLES.items():
        if kind in replica_specs:
            # the template first: taking a replica spec's last field drops it
            template = replica_specs[kind].setdefault("template", {})
            policies.add(take(replica_specs, kind, "restartPolicy", default="OnFailure"))
            replicas = take(replica_specs, kind, "replicas", default=1)
            pods[role] = (replicas, pod(template, ctx, f"{where} {kind}"))
    spec = assemble("kubeflow-paddlejob", pods, ctx, where)
    ports = {json.dumps(p.container.get("ports")) for _, p in pods.values()}
    master = json.loads(ports.pop()) if len(ports) == 1 else None
    if master and len(master) == 1 and master[0].get("name") == "master":
        spec["kubeflow"] = {"port": master[0]["containerPort"]}
        for _, p in pods.values():
            take(p.container, "ports")
    if len(policies) > 1 or policies - {"OnFailure"}:
        spec.setdefault("run", {})["restartPolicy"] = sorted(policies)[0]
        if len(policies) > 1:
            ctx.note(
                LOSSY,
                where,
                f"replica restartPolicy differs ({', '.join(sorted(policies))}); "
                f"{sorted(policies)[0]} now serves both",
            )
    run_policy = body.get("runPolicy", {})
    if "cleanPodPolicy" in run_policy:
        spec.setdefault("kubeflow", {})["cleanPodPolicy"] = take(run_policy, "cleanPodPolicy")
    _run(spec, run_policy)
    if "schedulingPolicy" in run_policy:
        _scheduling_policy(
            spec, run_policy["schedulingPolicy"], ctx, where, "runPolicy.schedulingPolicy"
        )
    return spec


def data_job(obj: dict[str, Any], spec: Spec, ctx: Context, where: str) -> None:
    """The seeds' data-preparation Job becomes spec.dataPrep (and its volume, if new)."""
    p = pod(obj.setdefault("spec", {}).setdefault("template", {}), ctx, where)
    role = p.role
    for key in CONTAINER_LISTS:
        for container in role.pop(key, []):
            ctx.note(
                LOSSY,
                where,
                f"{'sidecar' if key == 'sidecars' else 'init container'} "
                f"'{container.get('name')}' ({container.get('image')}) is not carried over: "
                "the data Job's pod runs none (spec.initContainers and sidecars are the "
                "trainers')",
            )
    out_dir = _literal(role, "OUT_DIR", ctx, where)
    split = _literal(role, "SPLIT_COUNT", ctx, where)
    if role.get("env"):
        p.container["env"] = role.pop("env")  # any other env stays listed as not mapped
    if len(p.volumes) != 1:
        ctx.note(
            LOSSY, where, f"the data Job mounts {len(p.volumes)} volumes; spec.dataPrep needs one"
        )
        return
    volume = _shared_volume(p.volumes[0], spec, ctx, where)
    prep: dict[str, Any] = {"volume": volume["name"]}
    image = role.pop("image", None)
    if image is not None and image != spec.get("image"):
        prep["image"] = image
    prep.update({key: role.pop(key) for key in ("command", "args") if key in role})
    if "backoffLimit" in obj["spec"]:
        prep["backoffLimit"] = obj["spec"].pop("backoffLimit")
    mount = p.volumes[0]["mountPath"].rstrip("/")
    if out_dir and (out_dir + "/").startswith(mount + "/") and mount != volume["mountPath"]:
        moved = volume["mountPath"].rstrip("/") + out_dir[len(mount) :]
        ctx.note(
            LOSSY,
            where,
            f"the data Job mounts the volume at {mount}, the trainers at "
            f"{volume['mountPath']}: one mountPath serves both, OUT_DIR {out_dir} "
            f"becomes {moved}",
        )
        out_dir = moved
    # Both as given: the importer leaves them out where they equal what the spec derives.
    if out_dir:
        prep["outDir"] = out_dir
    if split and split.isdigit():
        prep["splitCount"] = int(split)
    spec["dataPrep"] = prep
    ctx.data_priority = role.get("priorityClassName")
    _spec_wide_from_data_job(role, spec)
    _inherited(role, p, spec, ctx, where)


def _shared_volume(volume: dict[str, Any], spec: Spec, ctx: Context, where: str) -> dict[str, Any]:
    """The training volume with the same source, else the data Job's own, added to the spec."""

    def source(v: dict[str, Any]) -> str:
        return json.dumps(
            {k: x for k, x in v.items() if k not in ("name", "mountPath", "readOnly")},
            sort_keys=True,
        )

    volumes = spec.setdefault("volumes", [])
    same = next((v for v in volumes if source(v) == source(volume)), None)
    if same is not None:
        return same
    if volume["name"] in {v["name"] for v in volumes}:
        volume = {**volume, "name": f"{volume['name']}-data"}
    ctx.note(
        LOSSY,
        where,
        f"the data Job's volume '{volume['name']}' is not one the trainers mount; "
        "it is added to spec.volumes, so the trainers mount it too",
    )
    volumes.append(volume)
    return volume


def _spec_wide_from_data_job(data: dict[str, Any], spec: Spec) -> None:
    """The data Job runs with the spec-wide values (model.DATA_PREP_INHERITS), the trainers with
    their roles' where they have their own: where the data Job's value differs from the one
    the trainers share (moved up to the spec), theirs goes back to their roles and the data
    Job's becomes the spec-wide one, when every role then has a value of its own."""
    roles = [spec[name] for name in ROLE_NAMES if name in spec]
    for key in DATA_PREP_INHERITS:
        if key == "image" or data.get(key) == spec.get(key):
            continue
        if key in data and not all(key in role for role in roles) and key not in spec:
            continue  # a role without one would take the data Job's: left to _inherited
        if key in spec:
            trainers = spec.pop(key)
            for role in roles:
                role.setdefault(key, trainers)
        if key in data:
            spec[key] = data.pop(key)
            for role in roles:
                if role[key] == spec[key]:
                    role.pop(key)


def _inherited(role: dict[str, Any], p: Pod, spec: Spec, ctx: Context, where: str) -> None:
    """What the data Job takes from the spec: anything else it had is listed."""
    for key, value in role.items():
        if spec.get(key) != value:
            theirs = json.dumps(spec[key]) if key in spec else "unset"
            ctx.note(
                LOSSY,
                where,
                f"{key} {json.dumps(value)} is not carried over: the data Job "
                f"takes {key} from the spec ({theirs})",
            )
    for what, value in (("/dev/shm", p.shm), ("Volcano scheduling", p.volcano)):
        if value:
            ctx.note(
                LOSSY,
                where,
                f"{what} is not carried over: the data Job runs outside the gang, without /dev/shm",
            )
    if p.restart_policy not in (None, "Never"):
        ctx.note(LOSSY, where, f"restartPolicy {p.restart_policy} becomes Never")
    if p.security != spec.get("security", {}):
        ctx.note(
            LOSSY,
            where,
            f"security {json.dumps(p.security)} becomes the spec's "
            f"{json.dumps(spec.get('security', {}))}: the data Job takes spec.security",
        )


# --- collective-job: an Indexed Job running Paddle's launcher (workloads/collective_job) -------

# What the rank may read the completion index from: the annotation paddlegen reads, or the label
# of the same name (Kubernetes >= 1.28).
_INDEX_REFS = {
    f"metadata.{where}['{collective.COMPLETION_INDEX}']" for where in ("annotations", "labels")
}


def is_collective(job: dict[str, Any]) -> bool:
    """An Indexed Job whose pods get Paddle's launcher contract (PADDLE_MASTER)."""
    indexed = job.get("spec", {}).get("completionMode") == "Indexed"
    return indexed and any(e.get("name") == "PADDLE_MASTER" for e in _env_of(job))


def collective_job(obj: dict[str, Any], ctx: Context, where: str) -> Spec:
    """An Indexed Job with Paddle's launcher contract: what paddlegen renders for
    collective-job reads back without a note; for anything else, a note says what changes."""
    body = obj.setdefault("spec", {})
    replicas = _indexed_replicas(body, ctx, where)
    p = pod(body.setdefault("template", {}), ctx, where)
    subdomain = take(p.spec, "subdomain")
    service = collective.service_name(ctx.name)
    if subdomain != service:
        ctx.note(
            COSMETIC,
            where,
            f"the pods' subdomain {subdomain or '(none)'} becomes {service}: paddlegen names "
            "the headless Service after the job",
        )
    port = _master_port(p, ctx, where)
    _contract(p.role, replicas, port, subdomain, ctx, where)
    unwrap(p.role, ctx, where)
    if p.restart_policy not in (None, "Never"):
        ctx.note(
            LOSSY,
            where,
            f"restartPolicy {p.restart_policy} becomes Never: a rank restarted in place cannot "
            "rejoin the others",
        )
    p.restart_policy = None  # always Never: the pod failure policy takes no other
    queued = KUEUE_QUEUE_LABEL in (obj.get("metadata", {}).get("labels") or {})
    _failure_policy(body, ctx, where, queued)
    spec = assemble("collective-job", {"worker": (replicas, p)}, ctx, where)
    if port != CollectiveSettings().port:
        spec["collective"] = {"port": port}
    _run(spec, body)
    _gang_size(obj, spec, ctx)
    return spec


def _indexed_replicas(body: dict[str, Any], ctx: Context, where: str) -> int:
    """The ranks: every index runs at once (parallelism = completions)."""
    take(body, "completionMode")
    completions = take(body, "completions", default=1)
    parallelism = take(body, "parallelism", default=1)
    if parallelism != completions:
        ctx.note(
            LOSSY,
            where,
            f"parallelism {parallelism}, completions {completions}: a collective-job runs "
            f"all its {completions} ranks at once (parallelism {completions})",
        )
    return int(completions)


def _master_port(p: Pod, ctx: Context, where: str) -> int:
    """collective.port: from PADDLE_MASTER (`host:port`), else the container port `master`."""
    entry: dict[str, Any] = next(
        (e for e in p.role.get("env", []) if e.get("name") == "PADDLE_MASTER"), {}
    )
    text = str(entry.get("value", "")).rpartition(":")[2]
    ports = p.container.get("ports", [])
    named = next((q.get("containerPort") for q in ports if q.get("name") == "master"), None)
    port = int(text) if text.isdigit() and 0 < int(text) < 65536 else named
    port = port or CollectiveSettings().port
    ours = {"name": "master", "containerPort": port, "protocol": "TCP"}
    given = [{"protocol": "TCP", **q} for q in ports]
    if given and all({**q, "name": "master"} == ours for q in given):
        take(p.container, "ports")  # the one paddlegen declares
        if given != [ours]:
            ctx.note(COSMETIC, where, f"port {port} is declared as the container port `master`")
    return port


def _contract(
    role: dict[str, Any],
    replicas: int,
    port: int,
    subdomain: str | None,
    ctx: Context,
    where: str,
) -> None:
    """Remove the launcher's contract from the env: paddlegen derives it again; every entry
    that differs from what it derives is a note."""
    derived = collective.contract_env(ctx.name, replicas, port)
    # Rank 0 by the name the input's own Service gave it (renamed with the subdomain).
    theirs = {"PADDLE_MASTER": f"{ctx.name}-0.{subdomain}:{port}"}
    for entry in derived:
        name = entry["name"]
        given = take_env(role, name)
        if given is not None and _same_env(given, entry, theirs.get(name)):
            continue
        ours = json.dumps(entry.get("value", entry.get("valueFrom")))
        said = (
            "was not set"
            if given is None
            else (f"= {json.dumps(given.get('value', given.get('valueFrom')))}")
        )
        ctx.note(
            LOSSY,
            where,
            f"env {name} {said}; paddlegen sets {ours} (the launcher's contract, "
            f"{collective.CONTRACT_ENV[name]})",
        )


def _same_env(given: dict[str, Any], derived: dict[str, Any], alias: str | None) -> bool:
    """Whether ``given`` gives the pods what ``derived`` does (the API server adds apiVersion
    v1 to a fieldRef; the rank may come from the index label too)."""
    ref = dict(given.get("valueFrom", {}).get("fieldRef", {}))
    if ref.get("apiVersion") == "v1":
        ref.pop("apiVersion")
    if "valueFrom" in derived:
        wanted = derived["valueFrom"]["fieldRef"]["fieldPath"]
        paths = _INDEX_REFS if wanted in _INDEX_REFS else {wanted}
        return (
            set(given) == {"name", "valueFrom"}
            and ref.keys() == {"fieldPath"}
            and (ref["fieldPath"] in paths)
        )
    return set(given) == {"name", "value"} and given["value"] in (derived["value"], alias)


def unwrap(role: dict[str, Any], ctx: Context, where: str, at: FieldPath = ()) -> None:
    """The spec's command without paddlegen's master wrapper (and none for the launcher,
    which the workload runs by default); ``at``: where the input holds the command."""
    command = role.get("command")
    if command is None:
        ctx.note(
            LOSSY,
            where,
            "no command: the image's entrypoint becomes Paddle's launcher, "
            + " ".join(collective.LAUNCHER),
        )
        return
    if command[: len(collective.WRAPPER)] == collective.WRAPPER:
        command = command[len(collective.WRAPPER) :]
    else:
        ctx.note(
            LOSSY,
            where,
            "the command now runs after paddlegen's master wrapper (/bin/sh): on rank 0 "
            "PADDLE_MASTER becomes the pod's own IP, where the launcher starts its store",
            at,
        )
    if command == collective.LAUNCHER or not command:
        role.pop("command")
    else:
        role["command"] = command


def _failure_policy(body: dict[str, Any], ctx: Context, where: str, queued: bool) -> None:
    """paddlegen's pod failure policy: one failed or evicted rank fails the whole Job (and
    a queued job's ranks stopped by Kueue's preemption do not)."""
    given = take(body, "podFailurePolicy")
    if body.get("podReplacementPolicy") == "Failed":
        take(body, "podReplacementPolicy")  # the only one a pod failure policy allows
    if given == collective.failure_policy(collective.TRAINING_CONTAINER, queued):
        return
    was = (
        f"podFailurePolicy {json.dumps(given)}"
        if given
        else "no podFailurePolicy (a failed pod's index was retried alone)"
    )
    ctx.note(
        LOSSY,
        where,
        f"{was} becomes paddlegen's: a rank that fails, or is evicted, fails the whole Job at "
        "once (a rank started again alone cannot rejoin the others)"
        + (
            ", and a rank stopped by SIGTERM (exit 15, 137 or 143) is not a failure: Kueue's "
            "preemption stops them so"
            if queued
            else ""
        ),
    )
