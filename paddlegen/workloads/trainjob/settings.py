"""spec.trainjob: the TrainJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from paddlegen.spec.model import Settings
from paddlegen.spec.record import record


@record
class TrainJobSettings:
    """spec.trainjob: the ClusterTrainingRuntime the TrainJob references; None: paddlegen's
    own, chosen by the scheduler."""

    runtime: str | None = None


SECTION = Settings("trainjob", TrainJobSettings)
