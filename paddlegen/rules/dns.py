"""The pods' DNS: a dnsConfig the API server takes, and a dnsPolicy under which the job's pods
still find each other."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

from paddlegen.spec.loader import FieldPath, format_path
from paddlegen.spec.rule import Context, Finding, SpecRule, pod_settings
from paddlegen.workloads import WORKLOADS

_POLICY, _CONFIG = "dnsPolicy", "dnsConfig"
# Kubernetes v1.37.2 pkg/apis/core/validation/validation.go:4247-4253 (the schema holds the
# counts of nameservers and searches)
MAX_SEARCH_CHARS = 2048


def _dns_config(ctx: Context) -> Iterator[Finding]:
    """What the API server refuses in a pod's DNS settings that the schema cannot see
    (validatePodDNSConfig, Kubernetes v1.37.2 pkg/apis/core/validation/validation.go:4277-4321):
    dnsPolicy None with no nameserver, a nameserver that is no IP address (strictly parsed:
    StrictIPCIDRValidation is on from 1.36), a search list over 2048 characters."""
    checked: set[FieldPath] = set()
    refused: set[FieldPath] = set()
    for _, given in pod_settings(ctx, (_POLICY, _CONFIG)):
        policy_at, policy = given.get(_POLICY, ((), None))
        config_at, config = given.get(_CONFIG, ((), None))
        if config is not None and config_at not in checked:
            checked.add(config_at)
            yield from _config_values(ctx, config_at, config)
        if policy != "None" or (config or {}).get("nameservers"):
            continue
        # at the dnsConfig that lacks the nameserver, else at the policy that needs one
        place = config_at if config is not None else policy_at
        if place in refused:
            continue
        refused.add(place)
        if config is None:
            message = "dnsPolicy None leaves the pods' resolver to dnsConfig, and they have none"
        else:
            message = (
                f"dnsConfig lists no nameserver, and with dnsPolicy None "
                f"({format_path(policy_at)}) it is the pods' whole resolver configuration"
            )
        yield ctx.finding(
            place,
            f"{message}: the API server refuses the pods",
            "add dnsConfig.nameservers, e.g. the cluster DNS Service's IP, with which the "
            "job's names still resolve; or choose another dnsPolicy",
            key=config is not None,
        )


def _config_values(ctx: Context, at: FieldPath, config: dict[str, Any]) -> Iterator[Finding]:
    for i, server in enumerate(config.get("nameservers", [])):
        why = _not_an_ip(server)
        if why:
            yield ctx.finding(
                (*at, "nameservers", i),
                f"nameserver '{server}' {why}: the API server refuses it",
                "write the IP address plainly, e.g. 10.0.0.10 or fd00::a",
            )
    searches = config.get("searches", [])
    length = len(" ".join(searches))
    if length > MAX_SEARCH_CHARS:
        yield ctx.finding(
            (*at, "searches"),
            f"the search list is {length} characters long with the spaces between its "
            f"domains, more than the {MAX_SEARCH_CHARS} the API server takes",
            "list fewer or shorter search domains",
            key=True,
        )


def _not_an_ip(text: str) -> str:
    """Why ``text`` is no IP address as the API server parses a nameserver (Go's net.ParseIP,
    then netip.ParseAddr and no IPv4-mapped IPv6: k8s.io/apimachinery v0.37.2
    pkg/util/validation/ip.go:30-52); "" when it is one. The schema's pattern leaves out
    zones (fe80::1%eth0), which Python's parser takes and Go's does not."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        octets = text.split(".")
        if len(octets) == 4 and any(o.isdigit() and o != o.lstrip("0") != "" for o in octets):
            return "has leading zeros, which some resolvers read as octal"
        return "is not an IP address"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return "is an IPv4-mapped IPv6 address"
    return ""


DNS_CONFIG = SpecRule(
    "dns-config",
    "`dnsConfig` as the API server takes it: with `dnsPolicy: None` at least one nameserver, "
    "each nameserver an IP address, the search list at most 2048 characters",
    explanation=(
        "The API server checks `dnsConfig` in ways the schema cannot: `dnsPolicy: None` needs a "
        "nameserver, each nameserver is an IP address, and the search list is at most 2048 "
        "characters."
    ),
    severity="error",
    silenceable=True,
    check=_dns_config,
)


def _cluster_names(ctx: Context) -> Iterator[Finding]:
    """dnsPolicy Default gives a pod its node's resolver, which does not know the cluster's
    Service names (kubelet, Kubernetes v1.37.2 pkg/kubelet/network/dns/dns.go:304-323), and a
    workload whose pods find each other by those names (``Workload.peer_names``) then stalls.
    Kubernetes' default is ClusterFirst, whatever Default's name suggests."""
    why = WORKLOADS[ctx.workload].peer_names
    if not why:
        return
    said: set[FieldPath] = set()
    for pod, given in pod_settings(ctx, (_POLICY,)):
        place, policy = given.get(_POLICY, ((), None))
        if pod != "data" and policy == "Default" and place not in said:
            said.add(place)
            yield ctx.finding(
                place,
                "dnsPolicy Default resolves with the node's resolver, not the cluster's DNS "
                f"(Kubernetes' default is ClusterFirst): {why}, which would not resolve",
                "remove it for ClusterFirst, or give dnsPolicy None with the cluster DNS "
                "Service's IP in dnsConfig.nameservers",
            )


DNS_POLICY = SpecRule(
    "dns-policy",
    "a `dnsPolicy` under which the job's pods still find each other by name: not `Default` "
    "(the node's resolver) for a workload whose ranks meet by Service names, nor, for "
    "`paddlejob` with `intranet: Host`, `ClusterFirst`, which a pod on its node's network "
    "resolves as `Default`",
    explanation=(
        "`dnsPolicy: Default` gives a pod its node's resolver, which does not know the cluster's "
        "Service names, so a workload whose ranks meet by those names stalls. Under `paddlejob`'s "
        "`intranet: Host` the pods are on their nodes' network, where `ClusterFirst` falls back to "
        "the same."
    ),
    severity="warning",
    silenceable=True,
    check=_cluster_names,
)
