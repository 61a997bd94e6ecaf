"""JobSet (`--with jobset`): the JobSet controller, with its admission webhooks called by the
API server. Built from hack/tools/trainer, the module that builds Kubeflow Trainer too (the
JobSet version Trainer requires): see trainer.py."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from . import webhooks
from .base import Cluster, Component, GoBuild, free_port, pinned

READY_TIMEOUT = 60.0  # seconds, start to webhooks called; about 3 s on 2 idle cores


def ldflags(version: str) -> str:
    # What JobSet's Makefile sets (its `version_pkg`), so that its startup line says v0.12.0.
    jobset = pinned("sigs.k8s.io/jobset", "trainer")
    return f"-s -w -X sigs.k8s.io/jobset/pkg/version.GitVersion={jobset}"


# One `go build` makes both controllers (jobset.py's and trainer.py's), in a folder keyed by
# the Trainer version, which decides the JobSet version too (hack/tools/trainer/go.mod).
# ldflags: JobSet's only; Trainer sets no version at build time.
BUILD = GoBuild(
    "trainer",
    "github.com/kubeflow/trainer/v2",
    ("sigs.k8s.io/jobset", "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"),
    ("jobset-controller", "trainer-controller-manager"),
    ldflags=ldflags,
)
PROCESS = "jobset-controller"

# JobSet v0.12.0's webhooks as released (config/components/webhook/manifests.yaml with its
# patches: the pod webhooks only for pods of a JobSet; the names with config/default's
# `jobset-` prefix), by the paths its webhook server serves (pkg/webhooks/*_webhook.go,
# kubebuilder:webhook markers).
POD_SELECTOR = {
    "matchExpressions": [{"key": "jobset.sigs.k8s.io/jobset-name", "operator": "Exists"}]
}


def _rules(group: str, version: str, resource: str, *operations: str) -> list[dict[str, Any]]:
    return [{"apiGroups": [group], "apiVersions": [version], "operations": list(operations),
             "resources": [resource]}]  # fmt: skip


MUTATING: list[dict[str, Any]] = [
    {"name": "mjobset.kb.io", "path": "/mutate-jobset-x-k8s-io-v1alpha2-jobset",
     "rules": _rules("jobset.x-k8s.io", "v1alpha2", "jobsets", "CREATE")},
    {"name": "mpod.kb.io", "path": "/mutate--v1-pod", "objectSelector": POD_SELECTOR,
     "rules": _rules("", "v1", "pods", "CREATE")},
]  # fmt: skip
VALIDATING: list[dict[str, Any]] = [
    {"name": "vjobset.kb.io", "path": "/validate-jobset-x-k8s-io-v1alpha2-jobset",
     "rules": _rules("jobset.x-k8s.io", "v1alpha2", "jobsets", "CREATE", "UPDATE")},
    {"name": "vpod.kb.io", "path": "/validate--v1-pod", "objectSelector": POD_SELECTOR,
     "rules": _rules("", "v1", "pods", "CREATE")},
]  # fmt: skip
NAMES = {
    "MutatingWebhookConfiguration": "jobset-mutating-webhook-configuration",
    "ValidatingWebhookConfiguration": "jobset-validating-webhook-configuration",
}

# A JobSet the mutating webhook defaults: the network settings it adds
# (pkg/webhooks/jobset_webhook.go:129-139), which the CRD does not default.
PROBE = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "webhook-probe", "namespace": "default"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "probe",
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "probe", "image": "probe:1"}],
                            }
                        }
                    }
                },
            }
        ]
    },
}


def configuration(webhook_port: int, probe_port: int, cert_dir: Path) -> dict[str, Any]:
    """JobSet's configuration file (api/config/v1alpha1/configuration_types.go): its webhook
    server on loopback with our certificate, its own certificate management off (it would
    write a Secret and patch the configurations for a Service), no metrics, no leader
    election."""
    return webhooks.manager_configuration(
        "config.jobset.x-k8s.io/v1alpha1", webhook_port, probe_port, cert_dir,
        internalCertManagement={"enable": False},
    )  # fmt: skip


class ToolsController(Component):
    """A controller of the trainer tools module (BUILD: JobSet's, Trainer's), whose webhook
    configurations ``names`` (kind -> name) `stop` deletes."""

    process: str
    names: Mapping[str, str]

    def binaries(self) -> dict[str, Path]:
        return {self.process: BUILD.binaries()[self.process]}

    def build(self, absent: Collection[str]) -> None:
        BUILD.build(absent)

    def processes(self) -> dict[str, Path]:
        return self.binaries()

    def stop(self, state: Path, pids: Mapping[str, int]) -> None:
        webhooks.delete(state, list(self.names.items()))


class JobSet(ToolsController):
    name = "jobset"
    process = PROCESS
    names = NAMES

    def start(self, cluster: Cluster) -> None:
        """The controller (its CRD is among hack/crds, installed by `up`), then its webhook
        configurations once it serves them; wait until the API server calls them."""
        state = Path(cluster.state)
        folder = state / "jobset"
        port, probe_port = free_port(), free_port()
        ca_bundle = webhooks.serving_cert(folder / "certs")
        config = folder / "config.yaml"
        config.write_text(json.dumps(configuration(port, probe_port, folder / "certs")))
        cluster.start(
            PROCESS,
            [str(self.binaries()[PROCESS]), f"--kubeconfig={cluster.kubeconfig}",
             f"--config={config}"],
        )  # fmt: skip
        webhooks.wait_ready(cluster, PROCESS, probe_port, self.processes(), READY_TIMEOUT)
        cluster.apply(webhooks.configurations(NAMES, MUTATING, VALIDATING, port, ca_bundle))

        def defaulted(done: Any) -> bool:
            if done.returncode != 0:
                return False
            network = json.loads(done.stdout)["spec"].get("network", {})
            return network.get("enableDNSHostnames") is True

        webhooks.wait_called(cluster, "JobSet", PROBE, defaulted, READY_TIMEOUT)
