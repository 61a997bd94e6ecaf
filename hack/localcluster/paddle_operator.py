"""PaddleFlow's paddle-operator (`--with paddle-operator`), with gangs through Volcano."""

from __future__ import annotations

from . import images
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
        # PaddleFlow's controller, with the flag that turns gangs on, and an init image the
        # node has: its default, docker.io's alpine:3.10, is what an offline cluster cannot
        # pull (main.go:68). Under KWOK no container runs and the reference does not matter.
        cluster.start(
            "paddle-operator",
            [
                str(self.binaries()["paddle-operator"]),
                "--kubeconfig",
                cluster.kubeconfig,
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                "--scheduling=volcano",
                f"--initImage={images.PADDLE.reference}",
            ],
        )
