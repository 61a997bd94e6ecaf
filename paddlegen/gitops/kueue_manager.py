"""Kueue's manager configuration, written when a KueueSetup bounds `waitForPodsReady`.

Kueue v0.19 waits for an admitted job's pods to be ready even when its configuration says
nothing of it (a nil `waitForPodsReady` is defaulted to one with a 30-minute timeout:
sigs.k8s.io/kueue v0.19.2 apis/config/v1beta2/defaults.go:99-116), and without
`requeuingStrategy.backoffLimitCount` queues a job whose pods never start again for ever
(pkg/controller/core/workload_controller.go:1280-1290). The setting lives in Kueue's
Configuration, which Kueue reads once, at start, from the key `controller_manager_config.yaml`
of the ConfigMap `kueue-system/kueue-manager-config` (config/components/manager/
kustomization.yaml with config/default's namespace and `kueue-` prefix; the Helm chart's
`<release>-manager-config`). That key is one YAML string, which no kustomize patch can merge
into, so the whole ConfigMap is written: Kueue's released configuration, the integration the
Kubeflow PaddleJob needs, and the file's bound, under the names of the install the file's
`install` describes (kueue_install).
"""

from __future__ import annotations

from typing import Any

from paddlegen.gitops.kueue_install import Install
from paddlegen.yamlio import dump_yaml

KEY = "controller_manager_config.yaml"

# config/components/manager/controller_manager_config.yaml at v0.19.2, its settings as
# released (the commented-out ones left out): what an install without this file runs with.
RELEASED: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "Cohort.kueue.x-k8s.io": 1,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/raycluster",
            "ray.io/rayservice",
            "jobset.x-k8s.io/jobset",
            # released commented out; the `kubeflow-paddlejob` workload is queued through it
            "kubeflow.org/paddlejob",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}

# The KueueSetup's names for requeuingStrategy's fields (the rest are waitForPodsReady's own).
_REQUEUING = ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")


def configuration(bound: dict[str, Any], install: Install) -> dict[str, Any]:
    """Kueue's Configuration with the KueueSetup's ``waitForPodsReady`` section, and the
    certificate settings the install's own configuration has. Requeuing counts from each
    eviction (timestamp Eviction, Kueue's default), not from the job's creation: a job that
    waited long in the queue still gets its attempts."""
    wait: dict[str, Any] = {
        key: bound[key] for key in ("timeout", "recoveryTimeout", "blockAdmission") if key in bound
    }
    wait["requeuingStrategy"] = {
        "timestamp": "Eviction",
        **{key: bound[key] for key in _REQUEUING if key in bound},
    }
    certificates = (
        {"internalCertManagement": install.cert_management} if install.cert_management else {}
    )
    return {**RELEASED, **certificates, "waitForPodsReady": wait}


def config_map(bound: dict[str, Any], labels: dict[str, str], install: Install) -> dict[str, Any]:
    """The ConfigMap Kueue's Deployment reads its configuration from."""
    metadata = {"name": install.config_map, "namespace": install.namespace, "labels": dict(labels)}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {KEY: dump_yaml(configuration(bound, install))},
    }
