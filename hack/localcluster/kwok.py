"""KWOK (`--with kwok`): fake nodes that run every pod, for the tests that need no container."""

from __future__ import annotations

from .base import Cluster, Component, GoBuild

# The fake nodes `--with kwok` adds: room for every example's pods, one per node where host
# ports or anti-affinity ask for it.
FAKE_NODES = 8
FAKE_NODE_CAPACITY = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}


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
                        "labels": {"kubernetes.io/hostname": f"kwok-node-{i}", "type": "kwok"},
                        "annotations": {"kwok.x-k8s.io/node": "fake"},
                    },
                    "status": {"capacity": FAKE_NODE_CAPACITY, "allocatable": FAKE_NODE_CAPACITY},
                }
                for i in range(FAKE_NODES)
            ]
        )
