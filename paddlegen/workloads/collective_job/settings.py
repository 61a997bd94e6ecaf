"""spec.collective: the collective Indexed Job's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from paddlegen.spec.model import COLLECTIVE_PORT, Settings
from paddlegen.spec.record import record


@record
class CollectiveSettings:
    """spec.collective: where rank 0 serves the launcher's rendezvous."""

    port: int = COLLECTIVE_PORT


SECTION = Settings("collective", CollectiveSettings)
