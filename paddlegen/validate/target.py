"""What a server-side dry-run is given: which cluster, and the rendered specs it reads.

Apart from validate/server.py, which runs the dry-run and calls validate/kueue_queues.py: both
name these types, and neither needs to import the other (nor the pipeline) for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import Document

DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Server:
    """Which cluster: kubectl's own context and kubeconfig unless named."""

    context: str | None = None
    kubeconfig: str | None = None
    timeout: float = DEFAULT_TIMEOUT


class SpecObjects(Protocol):
    """What a dry-run reads of a rendered spec (``build.Rendered`` is one): its document and
    its objects, the base's and each environment's. Not ``build.Rendered`` itself: the
    pipeline imports the dry-run, which needs nothing of the pipeline."""

    @property
    def doc(self) -> Document | None: ...

    @property
    def manifests(self) -> list[Manifest]: ...

    @property
    def environments(self) -> dict[str, list[Manifest]]: ...
