"""What a workload is (``Workload``), and the pod every workload's templates lay out (``Pod``).

A registry entry owns everything paddlegen knows about one workload: the kinds of object it
renders and that its controllers make of them (``objects.TrainingObject``: their Argo CD health
checks, what Kueue writes into them), the names it derives, how spec roles map onto it, which
spec settings and run fields it carries, where ``explain`` finds them, how ``import`` reads it
back (``Imports``) and whose specs it converts, the rules only its specs get, and a context
builder that computes in Python what its templates lay out (env, ports, affinity, restart
policies), so templates hold no logic.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from paddlegen.spec.model import CHECKPOINT_DIR_ENV, RESTART_ATTEMPT_ENV, replicas
from paddlegen.spec.record import record

if TYPE_CHECKING:
    from paddlegen.spec.model import Job, Role, Settings, Volume
    from paddlegen.spec.rule import WorkloadRules
    from paddlegen.workloads.import_notes import Context
    from paddlegen.workloads.objects import TrainingObject

Spec = dict[str, Any]
# spec.run fields a main object may carry (the restart policy goes to the pods instead).
RUN_KEYS = ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished")
# Volcano's annotations (volcano.sh/apis scheduling/v1beta1 labels.go). A pod naming its group
# joins a PodGroup someone else made (an operator's, named after the job). A pod naming none is
# grouped by Volcano's own podgroup controller, one PodGroup per owner (the Job), owned by it
# and so deleted with it: its queue from the pod's annotation, its priority from the pod, its
# minMember from the owner's annotation (Volcano >= v1.12, controller flag
# --inherit-owner-annotations, on by default; pkg/controllers/podgroup/pg_controller_handler.go).
GROUP_NAME = "scheduling.k8s.io/group-name"
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
GROUP_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
# Volcano's network topology (volcano.sh/apis topology/v1alpha1 labels.go at v1.14.1): the
# podgroup controller turns a pod's annotations into its PodGroup's spec.networkTopology, mode
# hard or soft and highestTierAllowed (pkg/controllers/podgroup/pg_controller_handler.go
# :428-476 buildPodGroupFromPod, parseNetworkTopologyFromPod). Only for the PodGroups it makes:
# an operator's PodGroup (pods naming GROUP_NAME) has none of them.
NETWORK_TOPOLOGY_MODE = "volcano.sh/network-topology-mode"
NETWORK_TOPOLOGY_TIER = "volcano.sh/network-topology-highest-tier"
# Kueue's topology-aware scheduling reads a pod template's annotations (sigs.k8s.io/kueue
# v0.19.2 apis/kueue/v1beta2/topology_types.go:28,39,84): every pod of the pod set in one
# domain of the label (required) or as few as it can (preferred). Two pod sets of one group
# are placed together, a group being exactly two pod sets, one of them of a single pod
# (pkg/controller/jobframework/tas_validation.go:212-262): a Kubeflow PaddleJob's one Master
# with its Workers.
KUEUE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_PODSET_GROUP = "kueue.x-k8s.io/podset-group-name"
KUEUE_GROUP_NAME = "paddle"  # any name that is not a number
# The training container: first in every pod (operators inject their env into the first
# container only) and named `paddle` (the Kubeflow operator finds it by that name).
TRAINING_CONTAINER = "paddle"
SHM_VOLUME = "dshm"  # the Memory emptyDir at /dev/shm that spec.shm sizes


@record
class Workload:
    """One workload's registry entry: everything paddlegen knows of it."""

    name: str
    # What it renders and what the cluster needs to run it, in Markdown: the docs' table of
    # workloads (README.md, docs/index.md) is made of them (scripts/generate.py).
    summary: str
    title: str  # what messages call its main object: "the <title>"
    # The kinds of training object it renders, those that run its pods, its main object first
    # (`kind`); one that renders either of two kinds, as its spec says, lists both.
    objects: tuple[TrainingObject, ...]
    roles: Mapping[str, str]  # spec role -> its name in the main object
    # Names Kubernetes or an operator derives from metadata.name (pods, services): each must
    # be a DNS-1035 label of at most 63 characters, which bounds the length of the job name.
    derived_names: Callable[[str, Spec], list[str]]
    context: Callable[[Job], dict[str, Any]]  # what its templates lay out
    # What `paddlegen import` reads its objects back with: a function that imports its importer
    # modules when called, so that only an import loads them (never a render).
    imports: Callable[[], Imports]
    # Its own rules (its rules.py's RULES, which paddlegen/rules runs on its specs), through a
    # function that imports them when called, as ``imports``: its rules read its entry.
    rules: Callable[[], WorkloadRules]
    needs: str = "nothing"  # what the cluster needs to run it (the docs' table, as summary)
    # The spec section only this workload reads, spec.<section>, and the model its fields
    # build (Job.settings); its schema is the folder's settings.schema.json (settings_schema).
    settings: Settings | None = None
    # The workload of a spec that names none (one entry has it); and the one `init` and the
    # SDK propose for parameter servers, which the default may have none of (one entry too).
    default: bool = False
    ps_default: bool = False
    run_keys: tuple[str, ...] = ()  # the spec.run fields its main object carries
    # explain: where a role's pod template sits ({tmpl}), where run_keys and the gang's
    # policy go, and the outputs of the spec fields only this workload renders.
    pod_template: str = ""
    run_policy: str | None = None
    scheduling_policy: str | None = None
    explain: Mapping[str, list[str]] = field(default_factory=dict)
    # Env the operator gives the training container itself: name -> how (for the message).
    operator_env: Mapping[str, str] = field(default_factory=dict)
    # Init containers the operator adds to every pod itself (no spec container may take their
    # names); and, if its object cannot carry native sidecars, why (spec.sidecars is refused).
    operator_init_containers: tuple[str, ...] = ()
    no_sidecars: str = ""
    # Who makes its Volcano PodGroup without Volcano's network topology, if someone other than
    # Volcano's podgroup controller does (spec.scheduling.topology then needs Kueue).
    no_network_topology: str = ""
    # Spec fields (a role's or the spec's) its object has no place for: field -> (severity,
    # why). An error where running without it would differ from what the spec asks.
    unsupported: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Whether Kueue can queue its object (it must have a suspend field Kueue sets).
    queueable: bool = True
    # Its pods run Paddle's launcher with the launcher's contract, whose env this gives (name ->
    # its source: rule collective-env); empty when they do not. The launcher is the default
    # command, so a spec gives the training script as args.
    launcher: Mapping[str, str] = field(default_factory=dict)
    # What `init` writes and asks for it: the spec sections of its own, given the number of
    # parameter servers; its end-of-line comments where its fields mean more than the general
    # ones say; whether it runs exactly one pod (no trainer count to ask); and why it needs a
    # volume, if its settings name one.
    init_sections: Callable[[int], Spec] = field(default=lambda ps: {})
    init_comments: Mapping[str, str] = field(default_factory=dict)
    single_pod: bool = False
    needs_storage: str = ""
    # How a program that reads TRAINER_ID and TRAINERS (the Python SDK's entry point) learns
    # them in its pods: their env and a shell prefix for its command, given the trainer count.
    # None: the workload starts its own program, not the SDK's.
    trainer_identity: Callable[[int], tuple[list[dict[str, Any]], str]] | None = None
    # What restarts its whole group of ranks when one fails (spec.run.restarts), as the
    # group-restarts rule's hint names it; "" when nothing can.
    group_restarts: str = ""
    # The kinds of object its controllers make of its objects that Argo CD shows in the
    # Application's tree and judges the health of too (never queued: Kueue queues the object
    # they are made from).
    children: tuple[TrainingObject, ...] = ()
    # Why its training pods talk to the API server, which needs their ServiceAccount's token
    # mounted (rule service-account-token); "" when they do not.
    api_token: str = ""
    # How its training pods find each other by names only the cluster's DNS resolves (rule
    # dns-policy); "" when they do not.
    peer_names: str = ""
    # The workloads whose specs `paddlegen import --to <name>` converts to its own
    # (``Imports.convert``).
    converts_from: tuple[str, ...] = ()
    # What its smallest spec (``example``) holds in spec: beyond the name, image and memory
    # limit every spec of every workload may hold.
    example_fields: Spec = field(default_factory=dict)

    @property
    def example(self) -> Spec:
        """Its smallest spec, as a spec file holds it, in which no rule finds a fault."""
        from paddlegen.spec.loader import SPEC_API_VERSION, SPEC_KIND

        spec: Spec = {
            "workload": self.name,
            "image": "r/train:v1",
            "resources": {"limits": {"memory": "1Gi"}},  # without one: rule limits-missing
            **copy.deepcopy(self.example_fields),
        }
        return {
            "apiVersion": SPEC_API_VERSION,
            "kind": SPEC_KIND,
            "metadata": {"name": "demo"},
            "spec": spec,
        }

    @property
    def folder(self) -> str:
        """templates/<folder>/ holds its templates."""
        return self.name

    @property
    def package(self) -> str:
        """paddlegen/workloads/<package>/ holds everything else paddlegen knows of it."""
        return self.name.replace("-", "_")

    def settings_schema(self) -> dict[str, Any]:
        """Its settings' schema (scripts/generate.py writes it into the spec's schema): the
        section's ``definition`` in ``$defs`` and its ``property`` in spec, without the
        ``$ref``."""
        import json
        from pathlib import Path

        path = Path(__file__).parent / self.package / "settings.schema.json"
        schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return schema

    @property
    def kind(self) -> tuple[str, str]:
        """apiVersion and kind of the main object."""
        return self.objects[0].api_kind

    @property
    def kind_name(self) -> str:
        return self.objects[0].kind


@record
class Importer:
    """How `paddlegen import` reads one kind of training object back to a workload's spec."""

    kind: TrainingObject
    read: Callable[[dict[str, Any], Context, str], Spec]  # the object, the notes, its label
    # Which objects of the kind are the workload's, for a kind several workloads render (the
    # batch Job); None: every one that no other workload claims.
    claims: Callable[[dict[str, Any]], bool] | None = None


@record
class Imports:
    """What `paddlegen import` reads a workload's objects back with (``Workload.imports``)."""

    objects: tuple[Importer, ...]  # one per kind of training object it renders
    # Finds, among an input's objects, those besides its training objects that it renders and
    # regenerates from the spec (import carries them over as used).
    derived: Callable[[list[dict[str, Any]], Spec, Context], list[dict[str, Any]]] | None = None
    # Turns a spec of a workload it converts from (``Workload.converts_from``) into its own.
    convert: Callable[[Spec, Context, str], Spec] | None = None


@record
class Container:
    """One container as the templates write it (templates/_partials/container.yaml.j2), in
    Kubernetes' field names: every value final, an empty one left out."""

    name: str
    image: str
    imagePullPolicy: str | None = None
    restartPolicy: str | None = None  # Always: a native sidecar (an init container that stays)
    command: list[str] | None = None
    args: list[str] | None = None
    workingDir: str | None = None
    env: list[dict[str, Any]] = field(default_factory=list)
    envFrom: list[dict[str, Any]] = field(default_factory=list)
    ports: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, Any] = field(default_factory=dict)
    securityContext: dict[str, Any] = field(default_factory=dict)
    volumeMounts: list[dict[str, Any]] = field(default_factory=list)
    startupProbe: dict[str, Any] | None = None
    livenessProbe: dict[str, Any] | None = None


@record
class Pod:
    """A role's pod template as the templates write it: every value final."""

    labels: dict[str, str]
    annotations: dict[str, str]
    scheduler: str | None  # spec.schedulerName
    restart_policy: str | None
    service_account: str | None
    # The spec's choice, else only a pod that talks to the API server gets a token.
    automount_token: bool
    affinity: dict[str, Any] | None
    container: Container  # the training container, `paddle`
    # The sidecars, then the init containers: each init container finds the sidecars running.
    init_containers: list[Container]
    volumes: list[Volume]  # mounted, and listed as pod volumes
    shm: str | None  # the /dev/shm size limit, None for none
    dns_policy: str | None = None  # the spec's, else the workload's; None: Kubernetes' default
    dns_config: dict[str, Any] | None = None  # the spec's dnsConfig, as given
    priority_class: str | None = None  # spec.priorityClassName
    image_pull_secrets: list[dict[str, str]] = field(default_factory=list)
    # spec.subdomain: the headless Service whose name, after the pod's hostname, names the pod
    subdomain: str | None = None


def pod(
    job: Job,
    role: Role,
    *,
    restart_policy: str | None = None,
    env: list[dict[str, Any]] | None = None,
    ports: list[dict[str, Any]] | None = None,
    command: list[str] | None = None,
    args: list[str] | None = None,
    service_account: str | None = None,
    gang: bool = True,
    operator_group: bool = False,
    affinity: dict[str, Any] | None = None,
    volumes: list[Volume] | None = None,
    shm: bool = True,
    dns_policy: str | None = None,
    subdomain: str | None = None,
    attempt: dict[str, Any] | None = None,
    trains: bool = True,
) -> Pod:
    """The pod of ``role``: the workload's own env, ports and command come before the role's;
    ``args``, the workload's, replace the role's.

    A helper pod such as the data Job (``gang=False``) stays out of the Volcano gang, or
    minMember could never be met. With ``operator_group`` the pods join the PodGroup their
    operator makes; without, Volcano groups them by their Job (``batch_job_annotations``).
    ``affinity`` replaces the role's (a workload merges its own terms into it); ``volumes``
    limits the mounts (default: every job volume). ``service_account`` is the account a
    workload's pods talk to the API server with (its token is mounted); without one the pods
    run as the role's serviceAccountName, if any, without the API token (workload identity
    projects a token of its own or uses the node's metadata server). ``dns_policy`` is the
    workload's own. The role's automountServiceAccountToken and dnsPolicy win over both
    (rules service-account-token and dns-policy say where that stops the job).

    With a checkpoint (spec.checkpoint) every pod that ``trains`` (not the data Job's) reads
    its folder and its group's attempt in its env: ``attempt`` is where the workload's pods
    find it (an env var's value or valueFrom), "0" for a workload whose group never starts
    again. Every pod that trains, of every role (parameter servers too: one job, one fabric),
    attaches the spec's Multus networks, and its training container gets spec.nccl's env and
    the capabilities spec.security adds; its init containers and sidecars get neither.

    The role's priorityClassName is the pods' own. Under Volcano a batch Job's pods also give
    the gang its priority (Volcano's PodGroup for the Job takes the pods'), so without one of
    their own they carry the gang's; an operator puts the gang's on the PodGroup it makes.
    """
    volcano = gang and job.scheduling.scheduler == "volcano"
    annotations = {**job.annotations, **role.podAnnotations}
    if trains:
        annotations.update(job.training_pod_annotations)
    priority_class = role.priorityClassName
    if volcano and operator_group:
        annotations[GROUP_NAME] = job.name
    elif volcano:
        annotations[QUEUE_NAME] = job.scheduling.queue
        priority_class = priority_class or job.scheduling.priorityClassName
    if trains and job.scheduling.topology is not None:
        annotations.update(topology_annotations(job, volcano=volcano and not operator_group))
    # The recommended labels select the job's pods (one-pod-per-node terms): they win.
    labels = {**job.labels, **role.podLabels, **job.recommended_labels}
    mounted = job.volumes if volumes is None else volumes
    shm_size = job.shm if shm else None
    return Pod(
        labels=dict(sorted(labels.items())),
        annotations=dict(sorted(annotations.items())),
        scheduler="volcano" if volcano else None,
        restart_policy=restart_policy,
        service_account=service_account or role.serviceAccountName,
        automount_token=(
            service_account is not None
            if role.automountServiceAccountToken is None
            else role.automountServiceAccountToken
        ),
        affinity=affinity or role.affinity,
        container=Container(
            name=TRAINING_CONTAINER,
            image=role.image,
            imagePullPolicy=role.imagePullPolicy,
            command=command or role.command,
            args=role.args if args is None else args,
            workingDir=role.workingDir,
            env=[
                *(env or []),
                *(checkpoint_env(job, attempt) if trains else []),
                *(nccl_env(job, role) if trains else []),
                *role.env,
            ],
            envFrom=role.envFrom,
            ports=list(ports or []),
            resources=role.resources,
            securityContext=(
                job.training_security_context if trains else job.container_security_context
            ),
            volumeMounts=_mounts(mounted, shm_size),
        ),
        init_containers=[
            *(_init_container(job, given, sidecar=True) for given in role.sidecars),
            *(_init_container(job, given, sidecar=False) for given in role.initContainers),
        ],
        volumes=mounted,
        shm=shm_size,
        dns_policy=role.dnsPolicy or dns_policy,
        dns_config=role.dnsConfig,
        priority_class=priority_class,
        image_pull_secrets=[{"name": name} for name in role.imagePullSecrets],
        subdomain=subdomain,
    )


def topology_annotations(job: Job, *, volcano: bool) -> dict[str, str]:
    """What keeps a training pod's ranks in one domain (spec.scheduling.topology): a queued
    job's Kueue places them (its admission gives each pod its node, so Volcano, if it gangs
    them too, follows); a ``volcano`` gang that Kueue does not queue, Volcano's network
    topology. Neither: nothing (the rule topology-unhonoured says so)."""
    topology = job.scheduling.topology
    assert topology is not None
    if job.scheduling.kueue is not None:
        key = KUEUE_REQUIRED_TOPOLOGY if topology.required else KUEUE_PREFERRED_TOPOLOGY
        out = {key: topology.label}
        counts = sorted(role.replicas for role in job.roles.values())
        if len(counts) == 2 and counts[0] == 1:
            out[KUEUE_PODSET_GROUP] = KUEUE_GROUP_NAME
        return out
    if not volcano:
        return {}
    out = {NETWORK_TOPOLOGY_MODE: "hard" if topology.required else "soft"}
    if topology.hyperNodeTier is not None:
        out[NETWORK_TOPOLOGY_TIER] = str(topology.hyperNodeTier)
    return out


def checkpoint_env(job: Job, attempt: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The checkpoint contract's env (spec.checkpoint): the folder, and the attempt from
    ``attempt`` (an env var's value or valueFrom; default "0")."""
    if job.checkpoint is None:
        return []
    return [
        {"name": CHECKPOINT_DIR_ENV, "value": job.checkpoint.dir},
        {"name": RESTART_ATTEMPT_ENV, **(attempt or {"value": "0"})},
    ]


def nccl_env(job: Job, role: Role) -> list[dict[str, Any]]:
    """spec.nccl's variables but those the role's env sets itself, which win (rule nccl)."""
    own = {entry["name"] for entry in role.env}
    return [{"name": k, "value": v} for k, v in job.nccl.env.items() if k not in own]


def _init_container(job: Job, given: dict[str, Any], *, sidecar: bool) -> Container:
    """An init container or sidecar of the spec, with the securityContext every container of
    the job gets. A sidecar is Kubernetes' native one: restartPolicy Always makes the kubelet
    start it before the init containers after it and stop it once the pod's containers have
    ended, so a Job still completes (KEP-753; GA in Kubernetes 1.33)."""
    return Container(
        name=given["name"],
        image=given["image"],
        imagePullPolicy=given.get("imagePullPolicy"),
        restartPolicy="Always" if sidecar else None,
        command=given.get("command"),
        args=given.get("args"),
        workingDir=given.get("workingDir"),
        env=given.get("env", []),
        envFrom=given.get("envFrom", []),
        ports=given.get("ports", []),
        resources=given.get("resources", {}),
        securityContext=job.container_security_context,
        volumeMounts=[_mount(job.volume(m["name"]), m) for m in given.get("volumeMounts", [])],
        startupProbe=given.get("startupProbe"),
        livenessProbe=given.get("livenessProbe"),
    )


def _mount(volume: Volume, given: dict[str, Any]) -> dict[str, Any]:
    """A volume mount of an init container or sidecar: where and as the training container
    mounts the volume, unless it says otherwise."""
    mount = {"name": volume.name, "mountPath": given.get("mountPath", volume.mountPath)}
    if given.get("readOnly", volume.readOnly):
        mount["readOnly"] = True
    if "subPath" in given:
        mount["subPath"] = given["subPath"]
    return mount


def _mounts(volumes: list[Volume], shm: str | None) -> list[dict[str, Any]]:
    """The training container's mounts: every volume at its mountPath, and /dev/shm."""
    mounts = [
        {"name": v.name, "mountPath": v.mountPath, **({"readOnly": True} if v.readOnly else {})}
        for v in volumes
    ]
    return mounts + ([{"name": SHM_VOLUME, "mountPath": "/dev/shm"}] if shm else [])


def batch_job_annotations(job: Job) -> dict[str, str]:
    """A batch Job's own annotations: under Volcano, the gang's size, which Volcano's podgroup
    controller gives the PodGroup it makes for the Job's pods. paddlegen renders no PodGroup:
    one in Git would outlive the Job's pods and, re-created by a sync, hold queue capacity."""
    if job.scheduling.scheduler != "volcano":
        return {}
    return {GROUP_MIN_MEMBER: str(job.min_member)}


def one_pod_per_node(given: dict[str, Any] | None, selector: dict[str, str]) -> dict[str, Any]:
    """``given`` affinity plus a required anti-affinity that keeps the pods ``selector``
    matches on different nodes (pods that bind the same host ports must)."""
    term = {"labelSelector": {"matchLabels": selector}, "topologyKey": "kubernetes.io/hostname"}
    given = given or {}
    anti = given.get("podAntiAffinity", {})
    required = [*anti.get("requiredDuringSchedulingIgnoredDuringExecution", []), term]
    return {
        **given,
        "podAntiAffinity": {**anti, "requiredDuringSchedulingIgnoredDuringExecution": required},
    }


def run_fields(job: Job, keys: tuple[str, ...] = RUN_KEYS) -> dict[str, Any]:
    """The run settings the spec gives among ``keys``, in that order."""
    given = {key: getattr(job.run, key) for key in keys}
    return {key: value for key, value in given.items() if value is not None}


def common_context(job: Job) -> dict[str, Any]:
    """What the templates every workload shares (templates/_common) lay out."""
    prep = job.dataPrep
    if prep is None:
        return {"data_pod": None}
    env = [
        {"name": "OUT_DIR", "value": prep.outDir},
        {"name": "SPLIT_COUNT", "value": str(prep.splitCount)},
    ]
    data_pod = pod(
        job,
        prep.role,
        restart_policy="Never",
        env=env,
        gang=False,
        volumes=[prep.volume],
        shm=False,
        trains=False,
    )
    return {"data_pod": data_pod}


def trainers_env(count: int, trainer_id: dict[str, Any]) -> list[dict[str, Any]]:
    """TRAINER_ID (its value or valueFrom given) and TRAINERS, for the SDK's entry point."""
    return [{"name": "TRAINER_ID", **trainer_id}, {"name": "TRAINERS", "value": str(count)}]


def replica_pod_names(name: str, spec: Spec, roles: Mapping[str, str]) -> list[str]:
    """The last pod of each role an operator creates: ``<job>-<role>-<replicas - 1>``."""
    out = []
    for role, replica in roles.items():
        if role in spec or role == "worker":
            out.append(f"{name}-{replica.lower()}-{replicas(spec.get(role, {})) - 1}")
    return out
