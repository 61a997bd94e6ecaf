"""The registry of the semantic rules: every rule once, in the order the reference gives them."""

from __future__ import annotations

from paddlegen.rules import (
    accounts,
    capabilities,
    devices,
    dns,
    env,
    images,
    names,
    network,
    pod_security,
    pods,
    resources,
    scheduling,
    volumes,
    workload,
)
from paddlegen.spec.rule import SpecRule
from paddlegen.workloads.distributed_job import rules as distributed_job
from paddlegen.workloads.job import rules as job
from paddlegen.workloads.kubeflow_paddlejob import rules as kubeflow_paddlejob
from paddlegen.workloads.paddlejob import rules as paddlejob
from paddlegen.workloads.shared import rules as shared
from paddlegen.workloads.trainjob import rules as trainjob

# Every rule, in the order the rules reference, the schema's `ruleId` enum and `--ignore`'s list
# of rules give them (the order they came in: a new rule goes at the end).
REGISTRY: tuple[SpecRule, ...] = (
    job.JOB_REPLICAS,
    images.IMAGE_REQUIRED,
    names.NAME_LENGTH,
    volumes.VOLUME_SOURCE,
    volumes.VOLUME_CAPACITY,
    volumes.VOLUME_UNIQUE,
    volumes.VOLUME_REFERENCE,
    volumes.CEPHFS_IN_TREE,
    volumes.CEPHFS_SECRET_NAMESPACE,
    env.ENV_UNIQUE,
    env.ENV_VALUE,
    env.SECRET_LITERAL,
    images.IMAGE_TAG,
    resources.LIMITS_MISSING,
    scheduling.MIN_AVAILABLE,
    paddlejob.PADDLEJOB_MIN_AVAILABLE,
    scheduling.PRIORITY_CLASS,
    paddlejob.PADDLEJOB_HETER,
    paddlejob.PADDLEJOB_GLOO,
    paddlejob.PADDLEJOB_ELASTIC,
    paddlejob.PADDLEJOB_CLEAN_POD_POLICY,
    env.OPERATOR_ENV,
    kubeflow_paddlejob.KUBEFLOW_HETER,
    workload.WORKLOAD_SETTING,
    distributed_job.DISTRIBUTED_ROLES,
    distributed_job.DISTRIBUTED_REQUIRED,
    distributed_job.DISTRIBUTED_PORTS,
    distributed_job.DISTRIBUTED_COMMAND,
    distributed_job.DISTRIBUTED_ENV,
    distributed_job.HOSTPORT_NODES,
    shared.COLLECTIVE_ROLES,
    shared.COLLECTIVE_COMMAND,
    shared.COLLECTIVE_RESTART,
    shared.COLLECTIVE_ENV,
    shared.COLLECTIVE_ARGS,
    workload.WORKLOAD_UNSUPPORTED,
    distributed_job.DATAPREP_LAYOUT,
    volumes.VOLUME_ACCESS_MODE,
    workload.DEPRECATED,
    names.CONTROL_CHARACTER,
    resources.QUANTITY_FRACTIONAL_BYTES,
    resources.RESOURCE_NAME,
    resources.RESOURCE_QUANTITY,
    resources.GPUS_OVERRIDE,
    resources.GPU_SHM,
    resources.IMPLAUSIBLE_SIZE,
    resources.REQUEST_LIMIT,
    env.ENV_DOWNWARD_API,
    volumes.NFS_RECYCLE,
    volumes.PV_BINDING,
    pods.TOLERATION,
    env.ENV_KEY_REF,
    volumes.HOST_PATH,
    images.IMAGE_WHITESPACE,
    pods.TOPOLOGY_SPREAD,
    pods.CONTAINER_NAME,
    pods.CONTAINER_PORT,
    pods.PADDLEJOB_SIDECAR_PRUNED,
    shared.KUEUE_WORKLOAD,
    scheduling.KUEUE_LABELS,
    scheduling.KUEUE_DATA_PREP,
    scheduling.KUEUE_REQUESTS,
    trainjob.KUEUE_RUNTIME,
    shared.COLLECTIVE_LAUNCHER,
    paddlejob.PADDLEJOB_INTRANET,
    shared.COLLECTIVE_DEADLINE,
    workload.GROUP_RESTARTS,
    volumes.CHECKPOINT_VOLUME,
    shared.PS_END,
    devices.LAUNCHER_DEVICES,
    network.NETWORKS,
    network.NCCL,
    pod_security.POD_SECURITY,
    scheduling.TOPOLOGY_UNHONOURED,
    scheduling.TOPOLOGY_TIER,
    resources.UNKNOWN_RESOURCE,
    resources.SHM_MEMORY,
    volumes.RWX_STORAGE_CLASS,
    accounts.SERVICE_ACCOUNT_TOKEN,
    accounts.DEFAULT_ACCOUNT_TOKEN,
    dns.DNS_CONFIG,
    dns.DNS_POLICY,
    env.ENV_OVERRIDE,
    shared.LLM_CHECKPOINT,
    capabilities.IPC_LOCK_NON_ROOT,
    network.RDMA,
    network.NCCL_ACCELERATOR,
    capabilities.ROOT_VOLUME_OWNER,
    shared.LAUNCHER_PORT,
)
# The ids a spec's `ignore` entries and `--ignore` name (all but REQUIRED can be silenced); the
# schema's `ruleId` enum lists them too (scripts/generate.py writes it).
RULES: tuple[str, ...] = tuple(rule.id for rule in REGISTRY)
# The rules that guard what no job can be built without: a volume's one source, the volumes
# that settings name, the distributed image's volume and config folder. Silenced, they would
# leave paddlegen nothing it could render, so `ignore` entries and `--ignore` may not name them.
REQUIRED: tuple[str, ...] = tuple(rule.id for rule in REGISTRY if not rule.silenceable)
