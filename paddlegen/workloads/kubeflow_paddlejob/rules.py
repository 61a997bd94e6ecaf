"""The rules of workload `kubeflow-paddlejob`: the roles the Kubeflow PaddleJob has."""

from __future__ import annotations

from collections.abc import Iterator

from paddlegen.spec.rule import Context, Finding, SpecRule, WorkloadRules
from paddlegen.workloads.kubeflow_paddlejob.settings import KubeflowSettings
from paddlegen.workloads.shared.rules import KUEUE_WORKLOAD, LAUNCHER_PORT, PS_END


def _kubeflow_roles(ctx: Context) -> Iterator[Finding]:
    if "heter" in ctx.spec:
        yield ctx.finding(
            ("spec", "heter"),
            "workload 'kubeflow-paddlejob' has no heter role: the "
            "Kubeflow PaddleJob knows only Master (from ps) and Worker",
            "use workload 'paddlejob' for heterogeneous training",
            key=True,
        )


KUBEFLOW_HETER = SpecRule(
    "kubeflow-heter",
    "the Kubeflow PaddleJob has no heter role",
    explanation=(
        "The Kubeflow PaddleJob knows only Master (from `ps`) and Worker. A `heter` role has no "
        "place in it; workload `paddlejob` runs heterogeneous training."
    ),
    severity="error",
    silenceable=True,
    check=_kubeflow_roles,
)


def _training_ports(ctx: Context) -> dict[tuple[int, str], str]:
    """The training container's master port (no sidecar may take it)."""
    port = ctx.spec.get("kubeflow", {}).get("port", KubeflowSettings().port)
    return {(port, "TCP"): "master"}


RULES = WorkloadRules(
    rules=(KUBEFLOW_HETER, KUEUE_WORKLOAD, PS_END, LAUNCHER_PORT),
    training_ports=_training_ports,
)
