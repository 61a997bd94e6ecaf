"""spec.kubeflow: the Kubeflow PaddleJob's own settings (schema: settings.schema.json)."""

from __future__ import annotations

from dataclasses import dataclass

from paddlegen.spec.model import Settings


@dataclass(frozen=True)
class KubeflowSettings:
    """spec.kubeflow: the Kubeflow PaddleJob's rendezvous port and clean-up policy."""

    port: int = 36543
    cleanPodPolicy: str | None = None


SECTION = Settings("kubeflow", KubeflowSettings)
