"""What several rule modules share: volume sources, resource names and Kubernetes' name form."""

from __future__ import annotations

import re

# The volume sources paddlegen makes a claim of a size for (their `capacity`).
SIZED_SOURCES = ("nfs", "efs", "cephfs", "dynamic")
# The API server reads quantities in a 64-bit integer: a byte count past it overflows.
MAX_INT64 = 2**63 - 1
CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_QUALIFIED_NAME = re.compile(
    r"^(?:(?P<prefix>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*)/)?"
    r"(?P<name>[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)$"
)


def is_qualified_name(text: str) -> bool:
    """A label key, taint key or annotation key: ``[prefix/]name`` (IsQualifiedName)."""
    match = _QUALIFIED_NAME.match(text)
    if not match:
        return False
    return len(match["name"]) <= 63 and len(match["prefix"] or "") <= 253
