"""What a long call tells its caller as it goes: the library never prints, its caller may."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paddlegen.errors import Diagnostic
    from paddlegen.output.drift import Drift


class Events:
    """What a long call tells its caller as it goes (the library itself never prints): each
    method does nothing here, a caller overrides those it wants to hear."""

    def progress(self, done: int, total: int) -> None:
        """``done`` of the ``total`` specs that needed rendering are finished."""

    def waiting_for_lock(self) -> None:
        """Another paddlegen holds the output folder; this call waits for it."""

    def warnings(self, found: Sequence[Diagnostic]) -> None:
        """Warnings, once they are known: the specs' when every one is rendered (and written,
        when ``run_render`` writes what it planned), the manifests' when they are validated."""

    def validated(self, backend: str | None) -> None:
        """The manifests were validated by ``backend`` ("kubeconform" or "in-process"), before
        an API server's dry-run."""

    def drifted(self, rendered: Sequence[Any], drifts: Sequence[tuple[str, Drift]]) -> None:
        """How the output differs from what the specs render to, before a fix rewrites it."""
