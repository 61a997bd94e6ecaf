"""spec.kubeflow: the Kubeflow PaddleJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from paddlegen.spec.model import COLLECTIVE_PORT, Settings
from paddlegen.spec.record import record


@record
class KubeflowSettings:
    """spec.kubeflow: the Kubeflow PaddleJob's rendezvous port and clean-up policy."""

    # the launcher's rendezvous store on rank 0, as collective-job's: training-operator's own
    # default, 36543, lies among the ports the launcher draws (spec/model.py LAUNCHER_PORTS)
    port: int = COLLECTIVE_PORT
    cleanPodPolicy: str | None = None


SECTION = Settings("kubeflow", KubeflowSettings)
