"""spec.collective: the collective Indexed Job's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from dataclasses import dataclass

from paddlegen.spec.model import COLLECTIVE_PORT, Settings


# Compared by identity, printed as objects (eq=False, repr=False): nothing compares or prints
# one, and dataclasses compiles each method it generates at every start.
@dataclass(frozen=True, eq=False, repr=False)
class CollectiveSettings:
    """spec.collective: where rank 0 serves the launcher's rendezvous."""

    port: int = COLLECTIVE_PORT


SECTION = Settings("collective", CollectiveSettings)
