"""spec.scheduling in the job model: the scheduler, Volcano's queue and gang, Kueue's queue
and priority, and the topology that keeps a job's ranks together."""

from __future__ import annotations

from typing import Any

from paddlegen.spec.record import record

# The labels by which Kueue queues a job (sigs.k8s.io/kueue v0.19.2
# pkg/controller/constants/constants.go:23,48 QueueLabel, WorkloadPriorityClassLabel).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


@record
class Kueue:
    """spec.scheduling.kueue: the LocalQueue that admits the job, and its WorkloadPriorityClass."""

    queue: str
    priorityClass: str | None = None

    @property
    def labels(self) -> dict[str, str]:
        """What the training object (only it) carries for Kueue."""
        out = {KUEUE_QUEUE_LABEL: self.queue}
        if self.priorityClass:
            out[KUEUE_PRIORITY_LABEL] = self.priorityClass
        return out


@record
class Topology:
    """spec.scheduling.topology: the node label of the domain (a rack, a block) that keeps the
    ranks together, whether that is required or preferred, and for Volcano the tier of the
    HyperNodes that are its domains."""

    label: str
    required: bool
    hyperNodeTier: int | None = None


@record
class Scheduling:
    """spec.scheduling: the scheduler, for Volcano the gang's queue and size, Kueue's queue,
    and the topology that keeps the ranks together."""

    scheduler: str = "default"
    queue: str = "default"
    priorityClassName: str | None = None
    minAvailable: int | None = None
    kueue: Kueue | None = None
    topology: Topology | None = None


def build_scheduling(given: dict[str, Any]) -> Scheduling:
    kueue = given.get("kueue")
    topology = given.get("topology")
    return Scheduling(
        **{
            **given,
            "kueue": Kueue(**kueue) if kueue else None,
            "topology": _topology(topology) if topology else None,
        }
    )


def _topology(given: dict[str, Any]) -> Topology:
    required = "required" in given
    label = given["required"] if required else given["preferred"]
    return Topology(label, required, given.get("hyperNodeTier"))
