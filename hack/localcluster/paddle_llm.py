"""The PaddleFormers image on the real node (`--with paddle-llm`, which starts `node` too):
built beside the node's images, imported into the node's containerd when it lacks it. A
component of its own, as it is twice the Paddle image (images.PADDLE_LLM): a node that runs
no LLM trainer neither builds nor imports it. It runs no process."""

from __future__ import annotations

from collections.abc import Collection
from contextlib import AbstractContextManager
from pathlib import Path

from . import images, node
from .base import Cluster, Component


class PaddleLLM(Component):
    name = "paddle-llm"
    requires = ("node",)

    def images(self) -> dict[str, Path]:
        return {f"{images.PADDLE_LLM.name} image": images.PADDLE_LLM.archive()}

    def building_aside(self, absent: Collection[str]) -> AbstractContextManager[None]:
        return node.building_aside([images.PADDLE_LLM])

    def start(self, cluster: Cluster) -> None:
        # containerd's root outlives the cluster (node.containerd_root): imported once per key
        node.import_images(
            Path(cluster.state) / "node", node.Node().binaries(), [images.PADDLE_LLM]
        )
