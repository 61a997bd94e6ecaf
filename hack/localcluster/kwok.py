"""KWOK (`--with kwok`): fake nodes that run every pod, for the tests that need no container."""

from __future__ import annotations

from .base import Cluster, Component, GoBuild

# The fake nodes `--with kwok` adds: room for every example's pods, one per node where host
# ports or anti-affinity ask for it.
FAKE_NODES = 8
FAKE_NODE_CAPACITY = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
# Where each fake node sits, for topology-aware placement (Kueue's Topology levels, Volcano's
# HyperNodes), with the label names of Kueue's documentation (site/content/en/docs/concepts/
# topology.md at v0.19.2): two racks of block-1, too small for a job of four whole nodes
# (three nodes) and just right (four), and one rack of one node in block-2.
BLOCK_LABEL = "cloud.provider.com/topology-block"
RACK_LABEL = "cloud.provider.com/topology-rack"
RACKS = {"rack-1": ("block-1", 3), "rack-2": ("block-1", 4), "rack-3": ("block-2", 1)}


def node_places() -> list[tuple[str, str]]:
    """(block, rack) of kwok-node-0, kwok-node-1, ..., in RACKS' order."""
    return [(block, rack) for rack, (block, count) in RACKS.items() for _ in range(count)]


class Kwok(Component):
    name = "kwok"
    go = GoBuild("kwok", "sigs.k8s.io/kwok", ("sigs.k8s.io/kwok/cmd/kwok",), ("kwok",))

    def start(self, cluster: Cluster) -> None:
        # A fake kubelet for every fake node: pods get scheduled, Running and an IP; pods of
        # a batch Job complete by themselves (KWOK's default stages). Only the fake ones: a
        # real node (`--with node`) has its kubelet.
        cluster.start(
            "kwok",
            [
                str(self.binaries()["kwok"]),
                "--kubeconfig",
                cluster.kubeconfig,
                "--manage-all-nodes=false",
                "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
                "--node-port=0",
            ],
        )
        cluster.apply(
            [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": f"kwok-node-{i}",
                        "labels": {
                            "kubernetes.io/hostname": f"kwok-node-{i}",
                            "type": "kwok",
                            BLOCK_LABEL: block,
                            RACK_LABEL: rack,
                        },
                        "annotations": {"kwok.x-k8s.io/node": "fake"},
                    },
                    "status": {"capacity": FAKE_NODE_CAPACITY, "allocatable": FAKE_NODE_CAPACITY},
                }
                for i, (block, rack) in enumerate(node_places())
            ]
        )
