"""Kubeflow Trainer v2 (`--with trainer`, which starts `jobset` too: Trainer makes JobSets and
only the JobSet controller runs them): trainer-controller-manager, with its admission webhooks
called by the API server. Sources cited: github.com/kubeflow/trainer at v2.3.0."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import webhooks
from .base import Cluster, free_port
from .jobset import READY_TIMEOUT, ToolsController

PROCESS = "trainer-controller-manager"

# Trainer v2.3.0's webhooks as released (manifests/base/webhook/manifests.yaml with its
# patches, which name the configurations as cmd/trainer-controller-manager/main.go does and let
# a runtime opt out of validation by a label).
RUNTIME_SELECTOR = {
    "matchExpressions": [
        {"key": "trainer.kubeflow.org/webhook-validation", "operator": "NotIn",
         "values": ["disabled"]}
    ]
}  # fmt: skip


def _hook(name: str, path: str, resource: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "path": path,
        "rules": [{"apiGroups": ["trainer.kubeflow.org"], "apiVersions": ["v1alpha1"],
                   "operations": ["CREATE", "UPDATE"], "resources": [resource]}],
        **extra,
    }  # fmt: skip


MUTATING = [
    _hook("defaulter.trainjob.trainer.kubeflow.org",
          "/mutate-trainer-kubeflow-org-v1alpha1-trainjob", "trainjobs"),
]  # fmt: skip
VALIDATING = [
    _hook("validator.clustertrainingruntime.trainer.kubeflow.org",
          "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime",
          "clustertrainingruntimes", objectSelector=RUNTIME_SELECTOR),
    _hook("validator.trainingruntime.trainer.kubeflow.org",
          "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime", "trainingruntimes",
          objectSelector=RUNTIME_SELECTOR),
    _hook("validator.trainjob.trainer.kubeflow.org",
          "/validate-trainer-kubeflow-org-v1alpha1-trainjob", "trainjobs"),
]  # fmt: skip
NAMES = {
    "MutatingWebhookConfiguration": "defaulter.trainer.kubeflow.org",
    "ValidatingWebhookConfiguration": "validator.trainer.kubeflow.org",
}

# A TrainJob of a runtime that does not exist: the TrainJob webhook refuses it
# (pkg/runtime/core/clustertrainingruntime.go:99-108); the CRD's rules accept it.
PROBE = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "webhook-probe", "namespace": "default"},
    "spec": {"runtimeRef": {"name": "no-such-runtime"}},
}
PROBE_REFUSAL = "specified clusterTrainingRuntime must be created before the TrainJob is created"


def configuration(webhook_port: int, probe_port: int) -> dict[str, Any]:
    """Trainer's configuration file (pkg/apis/config/v1alpha1/configuration_types.go): its
    webhook server on loopback, its certificate management off (it would write a Secret and
    patch the configurations for a Service: main.go, IsCertManagementEnabled), no metrics, no
    leader election. It has no certDir: see ``start``."""
    return webhooks.manager_configuration(
        "config.trainer.kubeflow.org/v1alpha1", webhook_port, probe_port, None,
        certManagement={"enable": False},
    )  # fmt: skip


class Trainer(ToolsController):
    name = "trainer"
    requires = ("jobset",)
    process = PROCESS
    names = NAMES

    def start(self, cluster: Cluster) -> None:
        """The controller manager (its CRDs are among hack/crds, installed by `up`), then its
        webhook configurations once it serves them; wait until the API server calls them."""
        folder = Path(cluster.state) / "trainer"
        port, probe_port = free_port(), free_port()
        # Trainer's configuration has no certDir: its webhook server reads controller-runtime's
        # default, $TMPDIR/k8s-webhook-server/serving-certs (sigs.k8s.io/controller-runtime
        # v0.24.1 pkg/webhook/server.go:143-145), so TMPDIR is a folder of this cluster's.
        ca_bundle = webhooks.serving_cert(folder / "k8s-webhook-server" / "serving-certs")
        config = folder / "config.yaml"
        config.write_text(json.dumps(configuration(port, probe_port)))
        cluster.start(
            PROCESS,
            [str(self.binaries()[PROCESS]), f"--kubeconfig={cluster.kubeconfig}",
             f"--config={config}"],
            {**os.environ, "TMPDIR": str(folder)},
        )  # fmt: skip
        webhooks.wait_ready(cluster, PROCESS, probe_port, self.processes(), READY_TIMEOUT)
        cluster.apply(webhooks.configurations(NAMES, MUTATING, VALIDATING, port, ca_bundle))

        def refused(done: Any) -> bool:
            return done.returncode != 0 and PROBE_REFUSAL in done.stderr

        webhooks.wait_called(cluster, "Trainer", PROBE, refused, READY_TIMEOUT)
