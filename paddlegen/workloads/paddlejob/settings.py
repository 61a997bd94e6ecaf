"""spec.paddlejob: the PaddleFlow PaddleJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from paddlegen.spec.model import Settings
from paddlegen.spec.record import record


@record
class PaddleJobSettings:
    """spec.paddlejob, copied onto the PaddleFlow PaddleJob's spec (None: not set)."""

    cleanPodPolicy: str | None = None
    withGloo: int | None = None
    intranet: str | None = None
    elastic: int | None = None


SECTION = Settings("paddlejob", PaddleJobSettings)
