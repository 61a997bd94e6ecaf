"""The normalised job model: frozen, defaults applied, names derived. Built only from valid data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from fractions import Fraction
from typing import Any, Protocol

from paddlegen.spec.network import MULTUS_NETWORKS, Nccl
from paddlegen.spec.record import record
from paddlegen.spec.scheduling import Scheduling, build_scheduling

# Where rank 0 serves Paddle's launcher rendezvous store unless spec.collective.port says
# otherwise: below LAUNCHER_PORTS.
COLLECTIVE_PORT = 6768
# Where Paddle's launcher draws the ports of its own processes unless env PORT_RANGE says
# otherwise (paddle 3.3.1 distributed/launch/context/node.py:32-36); rank 0's launcher draws
# them (launch/controllers/collective.py:169-176) before it serves the rendezvous store
# (collective.py:190, sync_peers; launch/controllers/master.py:80-93), so one of its
# processes may be given the store's port.
LAUNCHER_PORTS = range(35100, 64001)
# Requests every container gets for what the spec leaves unset, so the scheduler reserves room
# (a pod without requests is first to be evicted); limits are left to the user.
DEFAULT_REQUESTS = {"cpu": "500m", "memory": "1Gi"}
ROLE_NAMES = ("ps", "worker", "heter")  # the order roles appear in every output
GPU_RESOURCE = "nvidia.com/gpu"
MANAGED_BY = "paddlegen"
# The ConfigMap <job>-run that records what a job runs (paddlegen/render/syncwaves.py).
RUN_RECORD_SUFFIX = "-run"

PV_SOURCES = ("nfs", "efs", "cephfs")  # backed by a PersistentVolume paddlegen creates
CLAIM_SOURCES = (*PV_SOURCES, "dynamic", "claim")  # mounted through a PersistentVolumeClaim
# A ConfigMap's or Secret's keys as read-only files (code, configs): no place for data.
OBJECT_SOURCES = ("configMap", "secret")
VOLUME_SOURCES = (*CLAIM_SOURCES, "hostPath", "emptyDir", *OBJECT_SOURCES)
# The CSI drivers of cephfs and efs volumes' PVs (templates/_partials/pv_source.yaml.j2 writes
# them too).
CEPHFS_CSI_DRIVER = "cephfs.csi.ceph.com"
EFS_CSI_DRIVER = "efs.csi.aws.com"
# What AWS recommends for mounting EFS over NFS (the PV renders them; import reads them back).
EFS_MOUNT_OPTIONS = [
    "nfsvers=4.1",
    "rsize=1048576",
    "wsize=1048576",
    "hard",
    "timeo=600",
    "retrans=2",
]
# Pod settings a role may override, each written to the pod spec (or, podLabels and
# podAnnotations, to the pod template's metadata) as given.
POD_FIELDS = (
    "imagePullSecrets",
    "serviceAccountName",
    "podLabels",
    "podAnnotations",
    "priorityClassName",
    "terminationGracePeriodSeconds",
    "runtimeClassName",
    "automountServiceAccountToken",
    "dnsPolicy",
    "dnsConfig",
    "topologySpreadConstraints",
)
# Containers a role's pods run beside the training container, per role like the pod settings;
# the data Job's pod gets none of them: they are the trainers', as env and resources are.
CONTAINER_LISTS = ("initContainers", "sidecars")
ROLE_FIELDS = (
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "resources",
    "gpus",
    "nodeSelector",
    "tolerations",
    "affinity",
    *POD_FIELDS,
    *CONTAINER_LISTS,
)


@record
class Role:
    """One replica type (ps, worker or heter) with the spec defaults folded in."""

    name: str
    replicas: int
    image: str
    imagePullPolicy: str | None
    command: list[str] | None
    args: list[str] | None
    workingDir: str | None
    env: list[dict[str, Any]]
    resources: dict[str, dict[str, Any]]  # requests/limits, GPUs already added
    nodeSelector: dict[str, str]
    tolerations: list[dict[str, Any]]
    affinity: dict[str, Any] | None
    imagePullSecrets: list[str] = field(default_factory=list)
    serviceAccountName: str | None = None  # the user's (workload identity)
    podLabels: dict[str, str] = field(default_factory=dict)
    podAnnotations: dict[str, str] = field(default_factory=dict)
    priorityClassName: str | None = None  # the pods' own, with any scheduler
    terminationGracePeriodSeconds: int | None = None
    runtimeClassName: str | None = None
    automountServiceAccountToken: bool | None = None  # None: the workload decides
    dnsPolicy: str | None = None  # None: the workload's, else Kubernetes' default
    dnsConfig: dict[str, Any] | None = None
    envFrom: list[dict[str, Any]] = field(default_factory=list)  # after the env, which wins
    topologySpreadConstraints: list[dict[str, Any]] = field(default_factory=list)
    # As the spec gives them (quantities and divisors spelled as the API server does); the pod
    # starts the sidecars first (workloads/base.py).
    initContainers: list[dict[str, Any]] = field(default_factory=list)
    sidecars: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pod_requests(self) -> dict[str, Fraction]:
        """What one pod of the role requests, as the scheduler and Volcano count it: the
        training container and the sidecars side by side, or, when more, an init container
        with the sidecars started before it (k8s.io/component-helpers v0.37.2
        resource/helpers.go:235-290, aggregateContainerResourcesByFn); a limit where no
        request is set, as the API server defaults it."""
        from paddlegen.spec.quantity import parse

        def asked(resources: dict[str, dict[str, Any]]) -> dict[str, Fraction]:
            given = {**resources.get("limits", {}), **resources.get("requests", {})}
            return {name: parse(quantity) for name, quantity in given.items()}

        def add(into: dict[str, Fraction], more: dict[str, Fraction]) -> dict[str, Fraction]:
            return {k: into.get(k, Fraction(0)) + more.get(k, Fraction(0)) for k in into | more}

        def peak(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
            return {k: max(a.get(k, Fraction(0)), b.get(k, Fraction(0))) for k in a | b}

        running = asked(self.resources)
        started: dict[str, Fraction] = {}  # the sidecars so far: they keep running
        busiest: dict[str, Fraction] = {}
        for sidecar in self.sidecars:
            own = asked(sidecar.get("resources", {}))
            running, started = add(running, own), add(started, own)
            busiest = peak(busiest, started)
        for init in self.initContainers:
            busiest = peak(busiest, add(started, asked(init.get("resources", {}))))
        return peak(running, busiest)


@record
class Volume:
    """One of spec.volumes, its defaults applied: what backs it and where the pods mount it."""

    name: str
    mountPath: str
    readOnly: bool
    source: str  # one of VOLUME_SOURCES
    config: dict[str, Any]  # the source's own fields
    capacity: str | None
    accessModes: list[str]
    storageClassName: str | None
    reclaimPolicy: str | None
    mountOptions: list[str]
    claimName: str | None  # the PVC the pods mount, when the source goes through one
    pvName: str | None  # the PV paddlegen creates, for nfs/efs/cephfs

    @property
    def efs_over_nfs(self) -> bool:
        """An efs volume in its NFS form (nfs: true), which takes AWS's mount options."""
        return self.source == "efs" and bool(self.config.get("nfs"))

    @property
    def efs_handle(self) -> str:
        """The EFS CSI driver's volumeHandle: `<fileSystemId>`, or `<fileSystemId>:<path>`
        below the root (aws-efs-csi-driver docs, static provisioning)."""
        path = self.config.get("path", "/")
        handle: str = self.config["fileSystemId"]
        return handle + ("" if path == "/" else f":{path}")

    @property
    def pod_source(self) -> dict[str, Any]:
        """The pod `volumes[]` entry's source."""
        if self.claimName:
            claim: dict[str, Any] = {"claimName": self.claimName}
            if self.readOnly:
                claim["readOnly"] = True
            return {"persistentVolumeClaim": claim}
        return {self.source: dict(self.config)}


@record
class DataPrep:
    """The data-preparation Job: one pod writing the split training data into one volume."""

    role: Role  # image, command and args from dataPrep; placement from the spec-wide defaults
    volume: Volume
    outDir: str
    splitCount: int
    backoffLimit: int | None = None  # None: Kubernetes' default


@record
class Run:
    """spec.run exactly as the spec gives it (None: not set). The operator workloads have
    defaults of their own (Kubeflow's by whether the job has ps, PaddleFlow's per role) that a
    default here must not mask; batch Jobs use ``restart_policy``."""

    restartPolicy: str | None = None
    backoffLimit: int | None = None
    restarts: int = 0  # group restarts: every rank starts again, up to this many times
    activeDeadlineSeconds: int | None = None
    ttlSecondsAfterFinished: int | None = None
    recreateOnChange: bool = False  # Argo CD deletes and recreates changed batch Jobs

    @property
    def restart_policy(self) -> str:
        return self.restartPolicy or "Never"


# Paddle's launcher gives its processes 30 s to end after it is sent SIGTERM, then kills them
# (paddle 3.3.1 distributed/launch/controllers/controller.py:148-155 stop, job/pod.py:120-133);
# a pod that saves on SIGTERM needs the kubelet to wait longer than that (Kubernetes' default
# grace is 30 s, which ends the launcher as its own wait ends).
CHECKPOINT_GRACE = 40
CHECKPOINT_DIR_ENV = "PADDLE_CHECKPOINT_DIR"
RESTART_ATTEMPT_ENV = "PADDLE_RESTART_ATTEMPT"


@record
class Checkpoint:
    """spec.checkpoint: the volume the ranks save on and their folder on it."""

    volume: Volume
    path: str  # relative to the volume's mountPath

    @property
    def dir(self) -> str:
        return f"{self.volume.mountPath.rstrip('/')}/{self.path}"


@record
class Settings:
    """A workload's own spec section, spec.<section>: its fields build ``model``, a frozen
    dataclass whose defaults are the ones the schema documents. The section's schema lies in
    the workload's folder too (workloads/base.py ``Workload.settings_schema``)."""

    section: str
    model: type[Any]

    def of(self, spec: dict[str, Any]) -> Any:
        """The settings ``spec`` (a valid spec's ``spec``) gives: the schema admits only the
        model's fields."""
        return self.model(**spec.get(self.section, {}))


class Owner(Protocol):
    """What the model asks of a workload's registry entry (workloads/base.py ``Workload``)."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> Settings | None: ...


@record
class Security:
    """spec.security: the restricted profile (default on) and the user's own settings."""

    restricted: bool = True
    runAsNonRoot: bool | None = None
    runAsUser: int | None = None
    runAsGroup: int | None = None
    fsGroup: int | None = None
    readOnlyRootFilesystem: bool | None = None
    capabilities: dict[str, list[str]] | None = None  # {"add": [...]}
    podSecurity: str | None = None  # the namespace's enforced level; only rules read it


@record
class Job:
    """A whole spec as the rules and the templates read it: defaults applied, names derived."""

    name: str
    namespace: str | None
    workload: str
    labels: dict[str, str]  # recommended labels plus the user's, sorted
    annotations: dict[str, str]
    roles: dict[str, Role]  # in ROLE_NAMES order, only the roles present
    shm: str | None
    volumes: list[Volume]
    scheduling: Scheduling
    run: Run
    dataPrep: DataPrep | None
    recommended_labels: dict[str, str] = field(default_factory=dict)
    security: Security = field(default_factory=Security)
    # Its workload's own settings (``Settings.model``, from spec.<section>); None for one
    # without a section of its own.
    settings: Any = None
    checkpoint: Checkpoint | None = None
    networks: list[str] = field(default_factory=list)  # spec.networks, as given
    nccl: Nccl = field(default_factory=Nccl)

    @property
    def total_replicas(self) -> int:
        return sum(role.replicas for role in self.roles.values())

    @property
    def min_member(self) -> int:
        """Pods the gang needs before any starts: minAvailable, else every replica."""
        given = self.scheduling.minAvailable
        return self.total_replicas if given is None else given

    @property
    def min_resources(self) -> dict[str, str]:
        """What the gang's first ``min_member`` pods request, roles in spec order (each pod
        with its sidecars and init containers, Role.pod_requests): the resources Volcano
        reserves in the queue before it starts any pod. Volcano counts a pod so too (v1.15.1
        pkg/controllers/util/util.go:29-47, the quota's PodUsageFunc); training-operator
        v1.9.0's own sum, used only when a job gives none, leaves init containers out.

        Whose first pods: Volcano's job controller sums the first minAvailable pods of its
        tasks sorted by priority, equal priorities in task order (v1.15.1
        pkg/controllers/job/job_controller_actions.go calcPGMinResources,
        job_controller_util.go CalcFirstCountResources); training-operator v1.9.0 does the
        same over its replica types (pkg/controller.v1/common/util.go CalcPGMinResources),
        but for equal priorities in Go's random map order, so each reconcile may count other
        pods. All of a job's pods share one priority here, so spec role order (ps, worker,
        heter; Master, Worker) is the order. PaddleFlow v0.3.5 sums every pod
        (paddlejob_helper.go getPGMinResource), and both operators take this sum as given.
        """
        from paddlegen.spec.quantity import format_quantity

        parts: dict[str, Fraction] = {}
        left = self.min_member
        for role in self.roles.values():
            counted = min(role.replicas, left)
            left -= counted
            if not counted:
                break
            for resource, amount in role.pod_requests.items():
                parts[resource] = parts.get(resource, Fraction(0)) + amount * counted
        return {resource: format_quantity(amount) for resource, amount in sorted(parts.items())}

    def volume(self, name: str) -> Volume:
        return next(v for v in self.volumes if v.name == name)

    @property
    def workload_labels(self) -> dict[str, str]:
        """The training object's labels: every object's, and Kueue's, which no other object
        (the data Job above all: docs/scheduling.md#kueue-queues) and no pod carries."""
        kueue = self.scheduling.kueue
        return dict(sorted({**self.labels, **kueue.labels}.items())) if kueue else self.labels

    @property
    def container_security_context(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.security.restricted:
            out = {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "seccompProfile": {"type": "RuntimeDefault"},
            }
        for key in ("runAsNonRoot", "runAsUser", "runAsGroup", "readOnlyRootFilesystem"):
            value = getattr(self.security, key)
            if value is not None:
                out[key] = value
        return out

    @property
    def training_security_context(self) -> dict[str, Any]:
        """The training container's: every container's, and the capabilities the spec adds
        (spec.security.capabilities), after the restricted profile's drop: [ALL]."""
        out = self.container_security_context
        added = (self.security.capabilities or {}).get("add")
        if added:
            out = {**out, "capabilities": {**out.get("capabilities", {}), "add": list(added)}}
        return out

    @property
    def training_pod_annotations(self) -> dict[str, str]:
        """What a training pod carries besides the spec's annotations: its Multus networks."""
        return {MULTUS_NETWORKS: ",".join(self.networks)} if self.networks else {}

    @property
    def pod_security_context(self) -> dict[str, Any]:
        fs_group = self.security.fsGroup
        return {} if fs_group is None else {"fsGroup": fs_group}


def recommended_labels(name: str, instance: str | None = None) -> dict[str, str]:
    """The app.kubernetes.io labels every object and pod template carries."""
    return {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": instance or name,
        "app.kubernetes.io/component": "training",
        "app.kubernetes.io/part-of": "paddlepaddle",
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def build_job(data: dict[str, Any], workload: Owner) -> Job:
    """The model of a spec that passed the schema and the checks, rendered as ``workload``
    (its registry entry: paddlegen.workloads ``workload_of``)."""
    meta = data["metadata"]
    spec = data.get("spec", {})
    name = meta["name"]
    namespace = meta.get("namespace")
    recommended = recommended_labels(name)
    labels = dict(sorted({**meta.get("labels", {}), **recommended}.items()))
    # The training pods' defaults: with a checkpoint, time to save it after SIGTERM.
    pod_defaults = spec
    if "checkpoint" in spec and "terminationGracePeriodSeconds" not in spec:
        pod_defaults = {**spec, "terminationGracePeriodSeconds": CHECKPOINT_GRACE}
    roles = {
        role: _role(role, pod_defaults, spec.get(role, {"replicas": 1}))
        for role in ROLE_NAMES
        if role in spec or role == "worker"
    }
    pods = sum(role.replicas for role in roles.values())
    data_volume = spec.get("dataPrep", {}).get("volume")
    volumes = [
        _volume(v, name, namespace, pods + (v["name"] == data_volume))
        for v in spec.get("volumes", [])
    ]
    return Job(
        name=name,
        namespace=namespace,
        workload=workload.name,
        labels=labels,
        annotations=dict(sorted(meta.get("annotations", {}).items())),
        roles=roles,
        shm=_quantity(spec.get("shm")),
        volumes=volumes,
        # The schema admits only these sections' own fields, so each maps onto its type.
        scheduling=build_scheduling(spec.get("scheduling", {})),
        run=Run(**spec.get("run", {})),
        dataPrep=_data_prep(spec, name, volumes, roles["worker"].replicas),
        recommended_labels=recommended,
        security=Security(**spec.get("security", {})),
        settings=workload.settings.of(spec) if workload.settings else None,
        checkpoint=_checkpoint(spec.get("checkpoint"), name, volumes),
        networks=list(spec.get("networks", [])),
        nccl=Nccl(**spec.get("nccl", {})),
    )


def _checkpoint(given: dict[str, Any] | None, job: str, volumes: list[Volume]) -> Checkpoint | None:
    if given is None:
        return None
    volume = next(v for v in volumes if v.name == given["volume"])
    return Checkpoint(volume, given.get("path", job))


def replicas(role: Mapping[str, Any]) -> int:
    """A role's pods: its ``replicas``, one unless given."""
    return int(role.get("replicas", 1))


def accelerator(spec: Mapping[str, Any]) -> str:
    """The resource ``gpus`` counts: ``spec.accelerator``, NVIDIA's GPU unless given."""
    return str(spec.get("accelerator", GPU_RESOURCE))


def restarts(spec: Mapping[str, Any]) -> int:
    """``run.restarts``: how often the group of ranks is restarted, never unless given."""
    return int(spec.get("run", {}).get("restarts", 0))


def role_value(spec: dict[str, Any], role: dict[str, Any], key: str, default: Any = None) -> Any:
    """A role's own value for ``key``, else the spec-wide default."""
    return role[key] if key in role else spec.get(key, default)


def _role(name: str, spec: dict[str, Any], role: dict[str, Any]) -> Role:
    def get(key: str, default: Any = None) -> Any:
        return role_value(spec, role, key, default)

    return Role(
        name=name,
        replicas=replicas(role),
        image=get("image", ""),
        imagePullPolicy=get("imagePullPolicy"),
        command=get("command"),
        args=get("args"),
        workingDir=get("workingDir"),
        env=[_env_var(e) for e in get("env", [])],
        resources=_resources(get("resources", {}), get("gpus", 0), accelerator(spec)),
        nodeSelector=dict(sorted(get("nodeSelector", {}).items())),
        tolerations=list(get("tolerations", [])),
        affinity=get("affinity"),
        imagePullSecrets=list(get("imagePullSecrets", [])),
        serviceAccountName=get("serviceAccountName"),
        podLabels=dict(sorted(get("podLabels", {}).items())),
        podAnnotations=dict(sorted(get("podAnnotations", {}).items())),
        priorityClassName=get("priorityClassName"),
        terminationGracePeriodSeconds=get("terminationGracePeriodSeconds"),
        runtimeClassName=get("runtimeClassName"),
        automountServiceAccountToken=get("automountServiceAccountToken"),
        dnsPolicy=get("dnsPolicy"),
        dnsConfig=get("dnsConfig"),
        topologySpreadConstraints=list(get("topologySpreadConstraints", [])),
        envFrom=list(get("envFrom", [])),
        initContainers=[_container(c) for c in get("initContainers", [])],
        sidecars=[_container(c) for c in get("sidecars", [])],
    )


def _container(given: dict[str, Any]) -> dict[str, Any]:
    """An init container or sidecar of the spec, its quantities as the API server spells them."""
    out = dict(given)
    if "env" in given:
        out["env"] = [_env_var(e) for e in given["env"]]
    if "resources" in given:
        out["resources"] = _quantities(given["resources"])
    return out


# What the data Job takes from the spec-wide defaults: where it may run, how to pull and every
# pod setting (never a role's). Not the training command, env (nor envFrom) or compute resources
# (GPUs), which belong to the trainers.
DATA_PREP_INHERITS = (
    "image",
    "imagePullPolicy",
    "nodeSelector",
    "tolerations",
    "affinity",
    *POD_FIELDS,
)


def _data_prep(
    spec: dict[str, Any], job: str, volumes: list[Volume], trainers: int
) -> DataPrep | None:
    if "dataPrep" not in spec:
        return None
    prep = spec["dataPrep"]
    volume = next(v for v in volumes if v.name == prep["volume"])
    defaults = {key: spec[key] for key in DATA_PREP_INHERITS if key in spec}
    own = {key: prep[key] for key in ("image", "command", "args") if key in prep}
    return DataPrep(
        role=_role("data", defaults, own),
        volume=volume,
        # The layout the distributed image reads: <JOB_PATH>/<JOB_NAME>/<trainer id>/data.
        outDir=prep.get("outDir", f"{volume.mountPath.rstrip('/')}/{job}"),
        splitCount=prep.get("splitCount", trainers),  # one part per trainer
        backoffLimit=prep.get("backoffLimit"),
    )


def _quantities(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """requests and limits with every quantity as the API server spells it; none empty."""
    out = {
        kind: {res: _quantity(q) for res, q in sorted(resources.get(kind, {}).items())}
        for kind in ("requests", "limits")
    }
    return {kind: values for kind, values in out.items() if values}


def _resources(
    resources: dict[str, Any], gpus: int, accelerator: str = GPU_RESOURCE
) -> dict[str, dict[str, Any]]:
    """The training container's: requests defaulted (DEFAULT_REQUESTS), ``gpus`` devices of
    ``accelerator`` as limits."""
    out: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}, **_quantities(resources)}
    for res, quantity in DEFAULT_REQUESTS.items():
        if res not in out["requests"] and res not in out["limits"]:
            out["requests"][res] = quantity  # a limit alone implies an equal request
    out["requests"] = dict(sorted(out["requests"].items()))
    if gpus:
        # Extended resources are set as limits; Kubernetes copies them to requests. A string,
        # as every quantity: an operator that writes the object back (PaddleFlow adds its
        # finalizer with an update) turns 1 into "1", and then owns the containers list, so
        # the next server-side apply of the job conflicts with it.
        out["limits"][accelerator] = str(gpus)
    return {kind: values for kind, values in out.items() if values}


def _env_var(entry: dict[str, Any]) -> dict[str, Any]:
    """The env entry with its resourceFieldRef divisor, a quantity, written as a string."""
    ref = entry.get("valueFrom", {}).get("resourceFieldRef", {})
    if "divisor" not in ref:
        return entry
    return {
        **entry,
        "valueFrom": {"resourceFieldRef": {**ref, "divisor": _quantity(ref["divisor"])}},
    }


def _quantity(value: Any) -> Any:
    """Quantities are written as the API server spells them (`0.5` as `500m`, `1024Mi` as
    `1Gi`), and as strings so no YAML reader retypes them. An operator that writes its job back
    (PaddleFlow adds its finalizer with an update) writes that spelling; any other would then
    differ from Git, and the next server-side apply would conflict with the operator."""
    from paddlegen.spec.quantity import canonical

    return None if value is None else canonical(value)


def default_access_modes(source: str, pods: int) -> list[str]:
    """What the job needs: a claim a StorageClass provisions (``dynamic``) for one pod asks for
    ReadWriteOnce, which every class provides, where ReadWriteMany would leave it Pending on
    most block and local storage; a shared one, and the file systems (NFS, EFS, CephFS, which
    provide it), ReadWriteMany."""
    return ["ReadWriteOnce"] if source == "dynamic" and pods == 1 else ["ReadWriteMany"]


def _own_class(pv: str | None, namespace: str | None) -> str | None:
    """The StorageClass a PV paddlegen creates gets when the spec names none: without a
    namespace, a class of its own (the PV's name), which only its claim requests.

    A PV is kept for its claim by `claimRef`, which needs the claim's namespace. When the spec
    has none, the namespace is decided at apply time, and nothing fills it into `claimRef`:
    kustomize's `namespace:` sets no PersistentVolume field (v5.7.1
    api/internal/konfig/builtinpluginconsts/namespace.go:7-19), Argo CD sets
    `metadata.namespace` of namespaced objects only (v3.5.1 controller/state.go:533-541). A
    class binds as well: a claim binds only a PV of the class it requests (Kubernetes v1.37.2
    staging/src/k8s.io/component-helpers/storage/volume/pv_helpers.go:300, and
    pkg/controller/volume/persistentvolume/pv_controller.go:274-277 for a claim that names its
    volume, as paddlegen's do). The class needs no StorageClass object: a claim that names its
    volume is never provisioned for, and a missing class binds at once (pv_helpers.go:102-105).
    With a namespace the PV keeps its `claimRef` and the class stays "" (none)."""
    return pv if pv and not namespace else None


def _volume(v: dict[str, Any], job: str, namespace: str | None, pods: int) -> Volume:
    """``pods``: how many pods mount the volume (trainers, and the data Job if it uses it)."""
    source = next(s for s in VOLUME_SOURCES if s in v)
    claim = None
    if source == "claim":
        claim = v["claim"]["name"]
    elif source in CLAIM_SOURCES:
        claim = f"{job}-{v['name']}"
    pv = None
    if source in PV_SOURCES:
        # PersistentVolumes are cluster-scoped: the namespace keeps names apart across teams.
        pv = "-".join(p for p in (namespace, job, v["name"]) if p)
    config = dict(v[source])
    if source == "emptyDir" and "sizeLimit" in config:
        config["sizeLimit"] = _quantity(config["sizeLimit"])
    return Volume(
        name=v["name"],
        mountPath=v["mountPath"],
        readOnly=v.get("readOnly", False),
        source=source,
        config=config,
        capacity=_quantity(v.get("capacity")),
        accessModes=list(v.get("accessModes", default_access_modes(source, pods))),
        storageClassName=v.get("storageClassName", _own_class(pv, namespace)),
        reclaimPolicy=v.get("reclaimPolicy"),
        mountOptions=list(v.get("mountOptions", [])),
        claimName=claim,
        pvName=pv,
    )
