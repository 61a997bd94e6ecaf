"""PaddleFlow's paddle-operator (`--with paddle-operator`), with gangs through Volcano."""

from __future__ import annotations

from .base import Cluster, Component, GoBuild


class PaddleOperator(Component):
    name = "paddle-operator"
    go = GoBuild(
        "paddle-operator",
        "github.com/paddleflow/paddle-operator",
        ("github.com/paddleflow/paddle-operator",),
        ("paddle-operator",),
    )

    def start(self, cluster: Cluster) -> None:
        # PaddleFlow's controller, with the flag that turns gangs on.
        cluster.start(
            "paddle-operator",
            [
                str(self.binaries()["paddle-operator"]),
                "--kubeconfig",
                cluster.kubeconfig,
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                "--scheduling=volcano",
            ],
        )
