"""The pods' networks: Multus attachments, their interfaces, and NCCL's settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.network import MULTUS_NETWORKS
from paddlegen.spec.rule import Context, Finding, SpecRule

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
