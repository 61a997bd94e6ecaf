"""spec.trainjob: the TrainJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from dataclasses import dataclass

from paddlegen.spec.model import Settings


# Compared by identity, printed as objects (eq=False, repr=False): nothing compares or prints
# one, and dataclasses compiles each method it generates at every start.
@dataclass(frozen=True, eq=False, repr=False)
class TrainJobSettings:
    """spec.trainjob: the ClusterTrainingRuntime the TrainJob references; None: paddlegen's
    own, chosen by the scheduler."""

    runtime: str | None = None


SECTION = Settings("trainjob", TrainJobSettings)
