"""spec.paddlejob: the PaddleFlow PaddleJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from dataclasses import dataclass

from paddlegen.spec.model import Settings


# Compared by identity, printed as objects (eq=False, repr=False): nothing compares or prints
# one, and dataclasses compiles each method it generates at every start.
@dataclass(frozen=True, eq=False, repr=False)
class PaddleJobSettings:
    """spec.paddlejob, copied onto the PaddleFlow PaddleJob's spec (None: not set)."""

    cleanPodPolicy: str | None = None
    withGloo: int | None = None
    intranet: str | None = None
    elastic: int | None = None


SECTION = Settings("paddlejob", PaddleJobSettings)
