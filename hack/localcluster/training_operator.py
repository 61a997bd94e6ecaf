"""Kubeflow's training-operator (`--with training-operator`): PaddleJob only, gangs through
Volcano."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path

from .base import Cluster, ClusterError, Component, GoBuild, free_port

# training-operator v1.9.0 starts its controllers only once its certificate rotator has found
# the webhook Secret and the ValidatingWebhookConfiguration of its release (pkg/cert/cert.go).
# Its webhook server cannot be reached from this API server (no Service, no pod network), so
# the configuration registered here matches no request: the operator's admission checks do not
# run, the controllers do.
NAMESPACE = "kubeflow"
SETUP: list[dict[str, object]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "training-operator-webhook-cert", "namespace": NAMESPACE},
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validator.training-operator.kubeflow.org"},
        "webhooks": [
            {
                "name": "validator.paddlejob.training-operator.kubeflow.org",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "clientConfig": {
                    "service": {
                        "name": "training-operator",
                        "namespace": NAMESPACE,
                        "path": "/validate-kubeflow-org-v1-paddlejob",
                    }
                },
                "rules": [],
            }
        ],
    },
]
# Where training-operator's webhook server reads its certificate (pkg/cert/cert.go, certDir):
# in a pod, the kubelet mounts the Secret there; its rotator waits for the files.
WEBHOOK_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")


class TrainingOperator(Component):
    name = "training-operator"
    go = GoBuild(
        "training-operator",
        "github.com/kubeflow/training-operator",
        ("github.com/kubeflow/training-operator/cmd/training-operator.v1",),
        ("training-operator",),
    )

    def start(self, cluster: Cluster) -> None:
        cluster.apply(SETUP)
        cluster.start(
            "training-operator",
            [
                str(self.binaries()["training-operator"]),
                "--kubeconfig",
                cluster.kubeconfig,
                "--metrics-bind-address=0",
                "--health-probe-bind-address=0",
                f"--webhook-server-port={free_port()}",
                "--enable-scheme=paddlejob",
                "--gang-scheduler-name=volcano",
            ],
        )
        mount_webhook_certs(cluster)


def mount_webhook_certs(cluster: Cluster, timeout: float = 30.0) -> None:
    """Do what the kubelet's Secret volume would: copy the certificate the operator's rotator
    wrote into its Secret to the folder its webhook server reads."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run(
            [
                cluster.kubectl,
                "get",
                "secret",
                "training-operator-webhook-cert",
                "-n",
                NAMESPACE,
                "-o",
                "json",
            ],
            env=cluster.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        data = json.loads(done.stdout).get("data", {}) if done.returncode == 0 else {}
        if {"tls.crt", "tls.key"} <= set(data):
            WEBHOOK_CERT_DIR.mkdir(parents=True, exist_ok=True)
            for file in ("tls.crt", "tls.key"):
                (WEBHOOK_CERT_DIR / file).write_bytes(base64.b64decode(data[file]))
            return
        time.sleep(0.2)
    raise ClusterError("training-operator wrote no webhook certificate into its Secret")
