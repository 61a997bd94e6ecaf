"""What the containers ask for: resource names, quantities, limits, GPUs and sizes."""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from paddlegen.errors import InvalidValueError
from paddlegen.rules.shared import CONTAINER_RESOURCES, MAX_INT64, SIZED_SOURCES
from paddlegen.spec.accelerators import ACCELERATORS, KNOWN_RESOURCES, is_extended, is_known
from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.model import GPU_RESOURCE, replicas
from paddlegen.spec.quantity import server_value, spelling
from paddlegen.spec.rule import (
    Context,
    Finding,
    SpecRule,
    container_places,
    gpus_given,
    init_containers,
    mount_point,
    role_gpus,
    role_resources,
)
from paddlegen.workloads import WORKLOADS


def _limits(ctx: Context) -> Iterator[Finding]:
    """Requests are always set (a default when the spec has none); limits stay the user's call,
    but a pod without a memory limit can take a node's memory from everything else on it."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    missing = [
        role
        for role, body in roles.items()
        if "memory" not in role_resources(ctx, body).get("limits", {})
    ]
    if missing:
        path = ("spec", "resources") if "resources" in ctx.spec else ("spec",)
        # Roles are named only where the workload has several: a `job` spec has no "worker".
        which = f" for {', '.join(missing)}" if len(WORKLOADS[ctx.workload].roles) > 1 else ""
        yield ctx.finding(
            path,
            f"no memory limit{which}: a runaway trainer can take the node's memory",
            "set resources.limits.memory",
            key=True,
        )


LIMITS_MISSING = SpecRule(
    "limits-missing",
    "every role has a memory limit",
    explanation=(
        "paddlegen always sets requests, but limits are the user's call. A pod without a memory "
        "limit can take a node's memory from everything else on it, and the kernel then kills "
        "processes it did not choose."
    ),
    severity="warning",
    silenceable=True,
    check=_limits,
)


def _resource_lists(ctx: Context) -> Iterator[tuple[FieldPath, str, Any]]:
    """(path, resource name, quantity) of every request and limit the spec sets."""
    for place, section in container_places(ctx, "resources"):
        for kind in ("requests", "limits"):
            for name, quantity in section["resources"].get(kind, {}).items():
                yield (*place, "resources", kind, name), name, quantity


_BYTE_RESOURCES = ("memory", "ephemeral-storage")


# The API server reads quantities in thousandths, in a 64-bit integer: past this it overflows,
# and calls a whole number of bytes (or devices) fractional.
_MAX_MILLI_WHOLE = MAX_INT64 // 1000


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _fractional_bytes(ctx: Context) -> Iterator[Finding]:
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
        sized = any(s in volume for s in SIZED_SOURCES)
        if sized and "capacity" in volume and server_value(volume["capacity"]) <= MAX_INT64:
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
            yield ctx.finding(
                path,
                f"{what} '{text}' is not a whole number of bytes: the API server warns, "
                f"and Kubernetes rounds it up to {up}",
                hint,
            )
        elif value > _MAX_MILLI_WHOLE:
            yield ctx.finding(
                path,
                f"{what} '{text}' is more bytes than the API server counts exactly (at most "
                f"{_MAX_MILLI_WHOLE}, about 8 PiB): past that its thousandths overflow, and it "
                "may call the value fractional",
                "use a size the cluster can hold",
            )


QUANTITY_FRACTIONAL_BYTES = SpecRule(
    "quantity-fractional-bytes",
    "memory, ephemeral-storage and hugepages, `shm`, `capacity` and `sizeLimit` are whole "
    "bytes (the API server warns, Kubernetes rounds up), at most 9223372036854775",
    explanation=(
        "Memory, ephemeral-storage, hugepages and sizes are counted in bytes. The API server warns "
        "about a fractional byte count and Kubernetes rounds it up; a count past 2^63-1 bytes "
        "overflows."
    ),
    severity="warning",
    silenceable=True,
    check=_fractional_bytes,
)


def _is_native(name: str) -> bool:
    """A resource in Kubernetes' own namespace (no domain, or a kubernetes.io one)."""
    return "/" not in name or "kubernetes.io/" in name


def _overcommits(name: str) -> bool:
    """Whether a request may be below the limit (helper.IsOvercommitAllowed)."""
    return _is_native(name) and not _is_hugepages(name)


def _resource_names(ctx: Context) -> Iterator[Finding]:
    """A container can ask only for cpu, memory, ephemeral-storage, hugepages-<size> and
    resources with a domain (ValidateContainerResourceName)."""
    for path, name, _ in ctx.once(_resource_lists):
        if "/" not in name and name not in CONTAINER_RESOURCES and not _is_hugepages(name):
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
        yield ctx.finding(path, problem, hint, key=True)


RESOURCE_NAME = SpecRule(
    "resource-name",
    "a container asks only for `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>` or "
    "a resource with a domain (not a quota's `requests.` name)",
    explanation=(
        "A container can ask only for `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>` and "
        "resources with a domain (`nvidia.com/gpu`). The API server refuses any other name, such "
        "as a quota's `requests.cpu`."
    ),
    severity="error",
    silenceable=True,
    check=_resource_names,
)


def _resource_quantities(ctx: Context) -> Iterator[Finding]:
    """Extended resources count whole devices; hugepages come in whole pages."""
    for path, name, quantity in ctx.once(_resource_lists):
        value = server_value(quantity)
        text = spelling(quantity)
        if is_extended(name) and value.denominator != 1:
            yield ctx.finding(
                path,
                f"{name} '{text}' is not a whole number: an extended resource counts devices",
                "use a whole number such as 1 or 8",
            )
        elif is_extended(name) and value > _MAX_MILLI_WHOLE:
            yield ctx.finding(
                path,
                f"{name} '{text}' is more than the API server counts exactly (at most "
                f"{_MAX_MILLI_WHOLE}): past that its thousandths overflow, and it may refuse "
                "the value as not a whole number",
                "use a whole number such as 1 or 8",
            )
        elif _is_hugepages(name):
            page_text = name.removeprefix("hugepages-")
            try:
                page = server_value(page_text)
            except InvalidValueError:
                page = Fraction(0)
            if page <= 0 or page.denominator != 1:
                yield ctx.finding(
                    path,
                    f"'{name}' names no page size: '{page_text}' is not a whole, positive quantity",
                    "name the node's page size, e.g. hugepages-2Mi or hugepages-1Gi",
                    key=True,
                )
            elif math.ceil(value) % page:
                yield ctx.finding(
                    path,
                    f"{name} '{text}' is not a whole number of {page_text} pages",
                    f"use a multiple of {page_text}",
                )


RESOURCE_QUANTITY = SpecRule(
    "resource-quantity",
    "extended resources (`nvidia.com/gpu`, any domain but `kubernetes.io`) are whole "
    "numbers; hugepages whole pages",
    explanation=(
        "Extended resources count whole devices, and hugepages come in whole pages. The API server "
        "refuses a fraction of either."
    ),
    severity="error",
    silenceable=True,
    check=_resource_quantities,
)


def _unknown_resources(ctx: Context) -> Iterator[Finding]:
    """An extended resource no node publishes leaves the pods Pending (and Kueue, with no
    flavor for it, never admits the job): the scheduler only matches names."""
    said: set[FieldPath] = set()
    for path, name, _ in ctx.once(_resource_lists):
        if not is_extended(name) or is_known(name) or path in said:
            continue
        said.add(path)
        from paddlegen.spec.schema import did_you_mean  # here: a known name never needs it

        close = did_you_mean(name, list(KNOWN_RESOURCES))
        yield ctx.finding(
            path,
            f"no device plugin paddlegen knows publishes '{name}': unless one of the "
            "cluster's does, the pods stay Pending",
            close or "if the cluster's device plugin publishes it, silence the rule for it",
            key=True,
        )


UNKNOWN_RESOURCE = SpecRule(
    "unknown-resource",
    "an extended resource in `resources` is one a known device plugin publishes (NVIDIA, "
    "AMD, Intel, Gaudi, Ascend, Kunlunxin, AWS Neuron and EFA, TPU, RDMA, HAMi's GPU shares;"
    " see Pods), else a warning naming the nearest known name: a name no node has leaves "
    "the pods Pending",
    explanation=(
        "The scheduler only matches extended resource names. A name no device plugin publishes "
        "leaves the pods Pending (and Kueue never admits the job); the warning names the nearest "
        "known name."
    ),
    severity="warning",
    silenceable=True,
    check=_unknown_resources,
)


def _role_resources(
    ctx: Context,
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
        resources = role_resources(ctx, body)
        yield (*where, "resources"), resources, gpus_at, role_gpus(ctx, body)


def _gpus_override(ctx: Context) -> Iterator[Finding]:
    """gpus writes the accelerator's limit (nvidia.com/gpu), over any limit resources gives
    it."""
    accelerator = ctx.accelerator
    for where, resources, gpus_at, gpus in _role_resources(ctx):
        limit = resources.get("limits", {}).get(accelerator)
        if gpus and limit is not None and server_value(limit) != gpus:
            yield ctx.finding(
                (*where, "limits", accelerator),
                f"this limit is replaced by {format_path(gpus_at)[2:]}: {gpus}, which "
                f"sets the {accelerator} limit",
                "set the number of GPUs in one place",
            )


GPUS_OVERRIDE = SpecRule(
    "gpus-override",
    "`gpus` does not silently replace a different limit of its accelerator (`nvidia.com/gpu`, "
    "or `spec.accelerator`'s) in `resources`",
    explanation=(
        "`gpus` writes the accelerator's limit (`nvidia.com/gpu`, or `spec.accelerator`'s). A "
        "different limit of it in `resources` would be silently replaced."
    ),
    severity="warning",
    silenceable=True,
    check=_gpus_override,
)


def _gpus_at(ctx: Context) -> Iterator[tuple[FieldPath, int]]:
    """Each place a pod's GPU count is set, with the count: a role's own gpus, else the spec's
    (once, for every role without its own)."""
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    seen: set[FieldPath] = set()
    for role, body in roles.items():
        at: FieldPath = ("spec", role, "gpus") if "gpus" in body else ("spec", "gpus")
        if at not in seen:
            seen.add(at)
            yield at, role_gpus(ctx, body)


def _gpu_shm(ctx: Context) -> Iterator[Finding]:
    """A container runtime gives /dev/shm 64 MiB: the data loaders' worker processes, which
    pass batches through shared memory, and on NVIDIA GPUs NCCL's intra-node transport,
    outgrow it on an accelerator pod and fail with a bus error or 'No space left on device'."""
    gpu_pods = [(at, gpus) for at, gpus in _gpus_at(ctx) if gpus]  # most specs have none
    if (
        not gpu_pods
        or ctx.spec.get("shm")
        or any(
            mount_point(volume["mountPath"]) == "/dev/shm" for volume in ctx.spec.get("volumes", [])
        )
    ):
        return
    accelerator = ctx.accelerator
    device = ACCELERATORS.get(accelerator, "GPU").rsplit(" ", 1)[-1]  # GPU, NPU, XPU
    users = "NCCL and data loader workers" if accelerator == GPU_RESOURCE else "data loader workers"
    for at, gpus in gpu_pods:
        yield ctx.finding(
            at,
            f"pods with {gpus} {device}{'s' if gpus != 1 else ''} and no /dev/shm but the "
            f"container runtime's 64 MiB: {users} outgrow it (a bus error, or 'No space "
            "left on device')",
            f"set spec.shm, e.g. shm: {4 * gpus}Gi (4Gi per {device}; its pages count against "
            "the memory limit)",
        )


GPU_SHM = SpecRule(
    "gpu-shm",
    "pods with accelerators (`gpus`) have a `/dev/shm` beyond the container runtime's 64 MiB,"
    " which data loader workers (and NCCL) outgrow: `shm`, or a volume of the spec's own at"
    " `/dev/shm`; "
    "reported at each `gpus` that reaches a pod (a role's own, or the spec's)",
    explanation=(
        "A container runtime gives `/dev/shm` 64 MiB. Data loader workers, which pass batches "
        "through shared memory, and NCCL's intra-node transport outgrow it on an accelerator pod "
        "and fail with a bus error or 'No space left on device'; `shm` sizes it."
    ),
    severity="warning",
    silenceable=True,
    check=_gpu_shm,
)


def _shm_memory(ctx: Context) -> Iterator[Finding]:
    """/dev/shm is a tmpfs whose pages the kernel charges to the memory cgroup of the
    container that writes them (Linux Documentation/admin-guide/cgroup-v2.rst, "Memory
    Ownership"; memory.stat's `shmem`), and the kubelet sizes that tmpfs at the smallest of
    its sizeLimit, the pod's memory limit and the node's allocatable memory (kubernetes
    pkg/volume/emptydir/empty_dir.go, calculateEmptyDirMemorySize). A shm as large as
    the limit cannot be filled: the trainer is OOM-killed first. A warning, as the API takes
    it and a job may never fill /dev/shm."""
    shm = ctx.spec.get("shm")
    if not shm:  # most specs have none
        return
    size = server_value(shm)
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    seen: set[FieldPath] = set()
    for role, body in roles.items():
        where: FieldPath = ("spec", role) if "resources" in body else ("spec",)
        limit = role_resources(ctx, body).get("limits", {}).get("memory")
        if limit is None or size < server_value(limit) or where in seen:
            continue
        seen.add(where)  # the spec's limit, said once for every role that has it
        pods = f"the {role} pods'" if where != ("spec",) else "the pods'"
        yield ctx.finding(
            ("spec", "shm"),
            f"shm '{spelling(shm)}' is not below {pods} memory limit '{spelling(limit)}' "
            f"({format_path((*where, 'resources', 'limits', 'memory'))}): /dev/shm's pages "
            "count against that limit, so the trainer is OOM-killed before /dev/shm fills",
            "keep shm well below limits.memory, which it shares with the processes, or raise "
            "limits.memory",
        )


SHM_MEMORY = SpecRule(
    "shm-memory",
    "`shm` is below each role's memory limit: /dev/shm's pages count against the limit of "
    "the container that writes them, and the kubelet caps the tmpfs at the pod's limit",
    explanation=(
        "`/dev/shm` is a tmpfs whose pages count against the memory limit of the container that "
        "writes them, and the kubelet caps it at the pod's limit. An `shm` at or above a role's "
        "memory limit promises room the container cannot use."
    ),
    severity="warning",
    silenceable=True,
    check=_shm_memory,
)


# Beyond these a spec is more likely a typo than a job (docs/validation.md#silencing-a-rule): the
# largest GPU nodes have 16 GPUs (DGX-2, a2-megagpu-16g; 8 is common), and a role of more than
# 1000 pods is past what one job plausibly runs on one cluster (Kubernetes is tested up to 5000
# nodes; 1000 trainers of 8 GPUs are 8000 GPUs).
MAX_PLAUSIBLE_GPUS = 16


MAX_PLAUSIBLE_REPLICAS = 1000


def _implausible_size(ctx: Context) -> Iterator[Finding]:
    """Replicas and GPUs the schema allows (up to 10000 and 64) but no real job has."""
    places: list[tuple[FieldPath, int]] = [(("spec", "gpus"), gpus_given(ctx.spec))]
    for role, body in ctx.roles():
        places.append((("spec", role, "gpus"), gpus_given(body)))
        pods = replicas(body)
        if pods > MAX_PLAUSIBLE_REPLICAS:
            yield ctx.finding(
                ("spec", role, "replicas"),
                f"{pods} {role} pods: more than {MAX_PLAUSIBLE_REPLICAS}, beyond the "
                "largest training jobs on Kubernetes",
                "check the number; if it is meant, silence the rule for this field",
            )
    for at, count in places:
        if count > MAX_PLAUSIBLE_GPUS:
            yield ctx.finding(
                at,
                f"{count} GPUs per pod: more than {MAX_PLAUSIBLE_GPUS}, the most the largest "
                "GPU nodes have (8 is common): the pods would stay Pending",
                "check the number; a pod runs on one node, so spread GPUs over more replicas",
            )


IMPLAUSIBLE_SIZE = SpecRule(
    "implausible-size",
    "no role has more than 1000 replicas and no pod more than 16 GPUs: the schema allows "
    "10000 and 64, but the largest GPU nodes have 16 (DGX-2, a2-megagpu-16g; 8 is common), "
    "so such a pod stays Pending, and 1000 pods are past what one job plausibly runs on one"
    " cluster (Kubernetes is tested up to 5000 nodes; 1000 trainers of 8 GPUs are 8000 "
    "GPUs). A job that really is that big silences it for the field (`{rule: "
    "implausible-size, path: $.spec.worker.replicas}`); `init` refuses such a size",
    explanation=(
        "The schema allows up to 10000 replicas and 64 GPUs a pod, but the largest GPU nodes have "
        "16, so such a pod stays Pending, and more than 1000 pods are past what one job plausibly "
        "runs. A job that really is that big silences the rule for the field."
    ),
    severity="warning",
    silenceable=True,
    check=_implausible_size,
)


def _requests_within_limits(ctx: Context) -> Iterator[Finding]:
    """A request is at most its limit; a resource that cannot be overcommitted (an extended
    resource, hugepages) has a limit, and its request equals it (validateResourceRequirements)."""
    said: set[tuple[FieldPath, str]] = set()
    own = [
        ((*place, "resources"), container["resources"], (), 0)
        for place, container in ctx.once(init_containers)
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
                yield ctx.finding(path, message, hint)


REQUEST_LIMIT = SpecRule(
    "request-limit",
    "every request is at most its limit; extended resources and hugepages have a limit, and"
    " a request equal to it (`gpus` counts as the `nvidia.com/gpu` limit)",
    explanation=(
        "The API server refuses a request above its limit. A resource that cannot be overcommitted "
        "(an extended resource, hugepages) needs a limit, and a request equal to it."
    ),
    severity="error",
    silenceable=True,
    check=_requests_within_limits,
)
