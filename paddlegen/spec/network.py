"""What the spec says of the pods' networks: Multus attachments and NCCL's settings."""

from __future__ import annotations

from paddlegen.spec.record import record

# The pod annotation Multus reads a pod's extra networks from, in its comma-separated form
# `[namespace/]name[@interface]` (k8snetworkplumbingwg/multus-cni v4.3.0
# pkg/k8sclient/k8sclient.go:175-263, parsePodNetworkAnnotation).
MULTUS_NETWORKS = "k8s.v1.cni.cncf.io/networks"


# spec.nccl's fields and the variable each sets (the one that changes with it, for explain)
NCCL_ENV = {
    "transport": "NCCL_NET",
    "hca": "NCCL_IB_HCA",
    "gidIndex": "NCCL_IB_GID_INDEX",
    "socketIfname": "NCCL_SOCKET_IFNAME",
}


@record
class Nccl:
    """spec.nccl: NCCL's network settings, written as env of every training container."""

    transport: str | None = None
    hca: list[str] | None = None
    gidIndex: int | None = None
    socketIfname: list[str] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The NCCL variables, by name (NVIDIA NCCL v2.30.7-1: NCCL_NET src/init.cc:2117 and
        src/plugin/net.cc:321-348, where a named network that does not start fails the job;
        NCCL_IB_DISABLE src/transport/net_ib/init.cc:27; NCCL_IB_HCA init.cc:317-324, a
        leading '=' matching names exactly; NCCL_IB_GID_INDEX net_ib/connect.cc:12;
        NCCL_SOCKET_IFNAME src/misc/socket.cc:196)."""
        out: dict[str, str] = {}
        if self.transport:
            tcp = self.transport == "tcp"
            out["NCCL_IB_DISABLE"] = "1" if tcp else "0"
            out["NCCL_NET"] = "Socket" if tcp else "IB"
        if self.gidIndex is not None:
            out["NCCL_IB_GID_INDEX"] = str(self.gidIndex)
        if self.hca:
            out["NCCL_IB_HCA"] = "=" + ",".join(self.hca)
        if self.socketIfname:
            out["NCCL_SOCKET_IFNAME"] = "=" + ",".join(self.socketIfname)
        return dict(sorted(out.items()))
