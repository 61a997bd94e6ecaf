"""The pods' networks: Multus attachments, their interfaces, and NCCL's settings and needs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.rules.capabilities import IPC_LOCK, RAISE_MEMLOCK
from paddlegen.spec.accelerators import ACCELERATORS, is_rdma_device
from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.network import MULTUS_NETWORKS
from paddlegen.spec.rule import Context, Finding, SpecRule, role_resources

# The cluster network's interface in every pod: the name the kubelet's runtime gives the CNI
# (containerd's CRI, and Multus passes it on to the default network: multus-cni v4.3.0
# pkg/multus/multus.go:94-107, getIfname, MasterPlugin).
CLUSTER_INTERFACE = "eth0"


def interfaces(networks: list[str]) -> list[str]:
    """Each attachment's interface in the pod: its own `@name`, else `net<position>` (Multus
    counts the cluster network as 0: multus.go:94-107, getIfname)."""
    return [entry.partition("@")[2] or f"net{i}" for i, entry in enumerate(networks, start=1)]


def _annotation_places(ctx: Context) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """Where the spec sets pod annotations itself: every object's, the spec's and each role's."""
    yield ("metadata", "annotations"), ctx.data.get("metadata", {}).get("annotations", {})
    yield ("spec", "podAnnotations"), ctx.spec.get("podAnnotations", {})
    for role, body in ctx.roles():
        yield ("spec", role, "podAnnotations"), body.get("podAnnotations", {})


def _networks(ctx: Context) -> Iterator[Finding]:
    networks = ctx.spec.get("networks")
    if not networks:
        return
    for place, given in _annotation_places(ctx):
        if MULTUS_NETWORKS in given:
            yield ctx.finding(
                (*place, MULTUS_NETWORKS),
                f"annotation {MULTUS_NETWORKS} is what spec.networks writes on the training pods",
                "keep one of them: spec.networks, or the annotation for Multus' JSON form",
                key=True,
            )
    seen: dict[str, int] = {}
    for i, name in enumerate(interfaces(networks)):
        here: FieldPath = ("spec", "networks", i)
        if name == CLUSTER_INTERFACE:
            yield ctx.finding(
                here,
                f"interface {name} is the cluster network's in every pod",
                "name another interface after '@', or none: Multus names it net<position>",
            )
        elif name in seen:
            other = format_path(("spec", "networks", seen[name]))
            yield ctx.finding(
                here,
                f"interface {name} is {other}'s too: the pod would not start",
                "give each attachment an interface of its own after '@'",
            )
        seen.setdefault(name, i)


NETWORKS = SpecRule(
    "networks",
    "`spec.networks` is the pods' only Multus annotation (no `k8s.v1.cni.cncf.io/networks` "
    "in `podAnnotations` or `metadata.annotations` beside it), and gives each attachment an "
    "interface of its own, not `eth0` (an unnamed one is `net<position>`)",
    explanation=(
        "`spec.networks` writes the pods' Multus annotation: a `k8s.v1.cni.cncf.io/networks` "
        "annotation beside it would replace it or be replaced. Each attachment needs an interface "
        "of its own, not the pod's `eth0`."
    ),
    severity="error",
    silenceable=True,
    check=_networks,
)


def _nccl(ctx: Context) -> Iterator[Finding]:
    given = ctx.spec.get("nccl")
    if given is None:
        return
    base: FieldPath = ("spec", "nccl")
    if given.get("transport") == "tcp":
        for key in ("hca", "gidIndex"):
            if key in given:
                yield ctx.finding(
                    (*base, key),
                    f"transport tcp turns InfiniBand off (NCCL_IB_DISABLE=1): {key} does nothing",
                    f"drop {key}, or use transport ib or roce",
                    severity="error",
                )
    # NCCL v2.30.7-1 src/misc/socket.cc:196-202 (the interfaces named, or none) and
    # src/bootstrap.cc:126 ("no socket interface found")
    have = list(dict.fromkeys([CLUSTER_INTERFACE, "lo", *interfaces(ctx.spec.get("networks", []))]))
    for i, name in enumerate(given.get("socketIfname", [])):
        if name not in have:
            yield ctx.finding(
                (*base, "socketIfname", i),
                f"the pods have no interface {name}, only {', '.join(have)}: NCCL's bootstrap "
                "fails when it finds none of those it is given",
                "name an interface of spec.networks: net1, net2, ... in its order, or the "
                "name after its '@'",
            )


NCCL = SpecRule(
    "nccl",
    "`spec.nccl` as NCCL reads it: `tcp` takes no `hca` or `gidIndex` (error); `socketIfname` "
    "names interfaces the pods have (`eth0`, `lo` and those of `spec.networks`)",
    explanation=(
        "`spec.nccl` writes NCCL's env. A TCP transport takes no HCA or GID index (an error); an "
        "interface the pods do not have makes NCCL run otherwise than the spec says (a warning). "
        "An `env` entry overriding a variable `spec.nccl` writes is rule `env-override`'s."
    ),
    severity="warning",
    also=("error",),
    silenceable=True,
    check=_nccl,
)


def _rdma(ctx: Context) -> Iterator[Finding]:
    """NCCL_NET=IB makes a network that does not start an error, not a fallback (NCCL
    v2.30.7-1 src/plugin/net.cc:321-348): a worker without a verbs device, or that cannot lock
    the memory it registers, fails at NCCL's start."""
    transport = ctx.spec.get("nccl", {}).get("transport")
    if transport not in ("ib", "roce"):
        return
    at: FieldPath = ("spec", "nccl", "transport")
    resources = role_resources(ctx, ctx.spec.get("worker", {}))
    names = [n for kind in ("requests", "limits") for n in resources.get(kind, {})]
    if not any(map(is_rdma_device, names)):
        yield ctx.finding(
            at,
            f"transport {transport} makes NCCL use InfiniBand verbs alone (NCCL_NET=IB), and "
            "the workers ask for no RDMA device: where a pod has none, NCCL fails at start",
            "request the RDMA resource your device plugin publishes in resources.limits: "
            "rdma/<pool> of the RDMA shared device plugin, nvidia.com/hostdev of an SR-IOV "
            "setup; or leave transport out for NCCL to choose",
        )
    added = ctx.spec.get("security", {}).get("capabilities", {}).get("add", [])
    if IPC_LOCK not in added:
        yield ctx.finding(
            at,
            f"transport {transport} registers (locks) the memory NCCL sends from, and the "
            "training container may not lock memory beyond the node's RLIMIT_MEMLOCK (no "
            "IPC_LOCK): above it NCCL fails at start instead of falling back",
            "add IPC_LOCK to security.capabilities.add, with the container running as root; "
            f"or {RAISE_MEMLOCK}",
        )


RDMA = SpecRule(
    "rdma",
    "`nccl.transport: ib` or `roce` comes with what RDMA needs: an RDMA device resource "
    "(`rdma/...`, `nvidia.com/hostdev`) in the workers' resources, and `IPC_LOCK`",
    explanation=(
        "`nccl.transport: ib` or `roce` makes NCCL use its InfiniBand verbs transport alone "
        "(`NCCL_NET=IB`), which fails instead of falling back to TCP: the workers need an RDMA "
        "device, which a device plugin's resource gives them, and may need to lock more memory "
        "than a container's default `RLIMIT_MEMLOCK` allows, which `IPC_LOCK` (for root) or a "
        "raised memlock limit on the nodes lets them. A warning, not an error: a webhook may "
        "add the device resource (an SR-IOV network's resource injector), and nodes may raise "
        "the memlock limit, which paddlegen cannot see."
    ),
    severity="warning",
    silenceable=True,
    check=_rdma,
)


# The collective library Paddle uses on other accelerators, which reads no NCCL_* variable:
# Kunlunxin's BKCL (paddle 3.3.1 distributed/parallel.py:1100-1102) and, through the custom
# device backend (xccl, parallel.py:1091-1095), Ascend's HCCL.
_LIBRARIES = {"Ascend NPU": "HCCL", "Kunlunxin XPU": "BKCL"}


def _nccl_accelerator(ctx: Context) -> Iterator[Finding]:
    device = ACCELERATORS.get(ctx.accelerator, "")
    library = _LIBRARIES.get(device)
    if library is None:
        return
    why = f"{device}s talk through {library}, not NCCL, so it does nothing"
    fix = f"remove it; set {library}'s own variables in env for the network"
    if "nccl" in ctx.spec:
        yield ctx.finding(("spec", "nccl"), f"spec.nccl writes NCCL's env: {why}", fix, key=True)
    places = [(("spec",), ctx.spec), *((("spec", r), b) for r, b in ctx.roles())]
    for base, body in places:
        for i, var in enumerate(body.get("env", [])):
            if var["name"].startswith("NCCL_"):
                yield ctx.finding(
                    (*base, "env", i, "name"), f"env {var['name']} is NCCL's: {why}", fix
                )


NCCL_ACCELERATOR = SpecRule(
    "nccl-accelerator",
    "no NCCL settings (`spec.nccl`, `NCCL_*` env) on Ascend NPU or Kunlunxin XPU pods "
    "(`spec.accelerator`), whose collectives run on HCCL or BKCL",
    explanation=(
        "Paddle runs its collectives on NCCL for NVIDIA GPUs only: on Ascend NPUs on HCCL, on "
        "Kunlunxin XPUs on BKCL, neither of which reads `NCCL_*` variables. NCCL settings on "
        "such pods do nothing, and the network they name is not the one used. A warning: the "
        "job runs, on the library's own defaults."
    ),
    severity="warning",
    silenceable=True,
    check=_nccl_accelerator,
)
