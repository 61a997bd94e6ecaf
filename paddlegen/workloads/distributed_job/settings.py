"""spec.distributed: the legacy pserver/trainer Job's settings (schema: settings.schema.json)."""

from __future__ import annotations

from dataclasses import field

from paddlegen.spec.model import Settings
from paddlegen.spec.record import record


@record
class DistributedSettings:
    """spec.distributed: what the legacy pserver/trainer image reads from its env."""

    volume: str | None = None
    trainConfigDir: str | None = None
    nic: str = "eth0"
    port: int = 7164
    portsNum: int = 1
    portsNumSparse: int = 0
    trainerCount: int = 1
    hostPorts: bool = True
    command: list[str] = field(default_factory=lambda: ["bin/bash", "-c", "/root/start.sh"])


DISTRIBUTED_DEFAULTS = DistributedSettings()
SECTION = Settings("distributed", DistributedSettings)
