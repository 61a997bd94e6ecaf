"""Kueue (`--with kueue`): the Kueue controller manager, with its admission webhooks called by
the API server (its mutating webhook is what suspends a queued job on create). Built from
hack/tools/kueue. Sources cited: github.com/kubernetes-sigs/kueue at v0.19.2."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import controlplane, webhooks
from .base import TOOLS, Cluster, Component, GoBuild, free_port, on_path
from .jobset import READY_TIMEOUT

PROCESS = "kueue"
CRDS = TOOLS / "kueue" / "crds"  # the CRDs only the controller needs (SOURCES.md there)

# The workloads paddlegen queues: `job` (and the data Job), JobSet (what Trainer runs), TrainJob
# and Kubeflow's PaddleJob, which v0.19 no longer turns on by default
# (config/components/manager/controller_manager_config.yaml). Their CRDs are all in hack/crds,
# installed by `up` before any component starts.
FRAMEWORKS = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "kubeflow.org/paddlejob",
)

# Kueue v0.19.2's webhooks as released (config/components/webhook/manifests.yaml, names with
# config/default's `kueue-` prefix) for its own kinds and the FRAMEWORKS only: for an
# integration that is off the server answers with a no-op (pkg/controller/jobframework/
# setup.go:109), so its hook would only add a call to every such object (every Pod, for one).
# The integrations' webhooks skip kube-system and kueue-system (config/components/webhook/
# kustomization.yaml).
SKIP_SYSTEM = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
         "values": ["kube-system", "kueue-system"]}
    ]
}  # fmt: skip
OWN = (
    ("clusterqueue", "kueue.x-k8s.io", "v1beta2", "clusterqueues"),
    ("resourceflavor", "kueue.x-k8s.io", "v1beta2", "resourceflavors"),
    ("workload", "kueue.x-k8s.io", "v1beta2", "workloads"),
)
JOBS = (
    ("job", "batch", "v1", "jobs"),
    ("jobset", "jobset.x-k8s.io", "v1alpha2", "jobsets"),
    ("trainjob", "trainer.kubeflow.org", "v1alpha1", "trainjobs"),
    ("paddlejob", "kubeflow.org", "v1", "paddlejobs"),
)


def _hook(
    kind: str, group: str, version: str, resource: str, validating: bool, **extra: Any
) -> dict[str, Any]:
    prefix = "validate" if validating else "mutate"
    operations = ["CREATE", "UPDATE"] if validating else ["CREATE"]
    resources = (
        [resource, f"{resource}/status"] if validating and kind == "workload" else [resource]
    )
    return {
        "name": f"{prefix[0]}{kind}.kb.io",
        "path": f"/{prefix}-{group.replace('.', '-')}-{version}-{kind}",
        "rules": [{"apiGroups": [group], "apiVersions": [version], "operations": operations,
                   "resources": resources}],
        **extra,
    }  # fmt: skip


MUTATING = [_hook(*own, validating=False) for own in OWN] + [
    _hook(*job, validating=False, namespaceSelector=SKIP_SYSTEM) for job in JOBS
]
VALIDATING = (
    [_hook(*own, validating=True) for own in OWN]
    + [_hook("cohort", "kueue.x-k8s.io", "v1beta2", "cohorts", validating=True)]
    + [_hook(*job, validating=True, namespaceSelector=SKIP_SYSTEM) for job in JOBS]
)
NAMES = {
    "MutatingWebhookConfiguration": "kueue-mutating-webhook-configuration",
    "ValidatingWebhookConfiguration": "kueue-validating-webhook-configuration",
}

# A Job of a queue: the mutating webhook suspends it (pkg/controller/jobs/job/job_webhook.go,
# Default -> jobframework.ApplyDefaultForSuspend); the API server alone would not.
PROBE = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "webhook-probe",
        "namespace": "default",
        "labels": {"kueue.x-k8s.io/queue-name": "webhook-probe"},
    },
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "probe", "image": "probe:1"}],
            }
        }
    },
}

# With its own certificate management off, Kueue serves metrics with a certificate it reads from
# this fixed path, and exits when there is none, whatever metrics.bindAddress says
# (cmd/kueue/main.go:213-229). It sees our files there through an overlay of /etc in a mount
# namespace of its own: the machine's /etc is not touched.
METRICS_CERTS = Path("/etc/kueue/metrics/certs")


# A Kueue Configuration (as JSON) put in the state folder before `up`: Kueue runs with it,
# but for how it is served here and its integrations (those `configuration` sets). The test
# of `paddlegen kueue`'s waitForPodsReady bound gives Kueue the configuration it writes.
GIVEN = "kueue-config.json"


def configuration(webhook_port: int, probe_port: int, cert_dir: Path) -> dict[str, Any]:
    """Kueue's configuration file (apis/config/v1beta2/configuration_types.go): its webhook
    server on loopback with our certificate, its own certificate management off (it would
    write a Secret and patch the configurations for a Service), no metrics, no leader election;
    only jobs that name a queue are queued; the visibility server off (it is an aggregated API
    server, called through an APIService: features.VisibilityOnDemand, main.go:433-440)."""
    return webhooks.manager_configuration(
        "config.kueue.x-k8s.io/v1beta2", webhook_port, probe_port, cert_dir,
        internalCertManagement={"enable": False},
        manageJobsWithoutQueueName=False,
        integrations={"frameworks": list(FRAMEWORKS)},
        featureGates={"VisibilityOnDemand": False},
    )  # fmt: skip


def ldflags(version: str) -> str:
    # What Kueue's Makefile sets (its `version_pkg`), so that its startup line says v0.19.2.
    return f"-X sigs.k8s.io/kueue/pkg/version.GitVersion={version}"


class Kueue(Component):
    name = "kueue"
    go = GoBuild(
        "kueue", "sigs.k8s.io/kueue", ("sigs.k8s.io/kueue/cmd/kueue",), (PROCESS,),
        ldflags=ldflags,
    )  # fmt: skip

    def processes(self) -> dict[str, Path]:
        # The recorded process is `unshare --fork`, which runs Kueue as its child (see start).
        return {PROCESS: on_path("unshare", "util-linux")}

    def unusable(self) -> list[str]:
        lacking = []
        if os.geteuid() != 0:
            lacking.append("root (Kueue runs in a mount namespace of its own: kueue.py)")
        if shutil.which("unshare") is None:
            lacking.append("unshare (Debian's util-linux)")
        return lacking

    def start(self, cluster: Cluster) -> None:
        """Kueue's own CRDs (the five paddlegen writes are among hack/crds, installed by `up`),
        the controller, then its webhook configurations once it serves them; wait until the API
        server calls them."""
        controlplane.install_crds(cluster, sorted(CRDS.glob("*.yaml")))
        folder = Path(cluster.state) / "kueue"
        port, probe_port = free_port(), free_port()
        ca_bundle = webhooks.serving_cert(folder / "certs")
        given = Path(cluster.state) / GIVEN
        config = json.loads(given.read_text(encoding="utf-8")) if given.is_file() else {}
        config |= configuration(port, probe_port, folder / "certs")
        (folder / "config.yaml").write_text(json.dumps(config))
        upper, work = folder / "etc", folder / "etc-work"  # the overlay's: see METRICS_CERTS
        webhooks.serving_cert(upper / METRICS_CERTS.relative_to("/etc"))
        work.mkdir(exist_ok=True)
        overlay = f"lowerdir=/etc,upperdir={upper},workdir={work}"
        # --fork: `unshare` stays the recorded process; it ignores SIGTERM, and when `down`
        # kills it, --kill-child sends Kueue SIGKILL (util-linux 2.38 unshare.c): with SIGTERM
        # Kueue's graceful shutdown outlived `down` (seen: the node fixture's host check found
        # it running after `down`, the pid nobody recorded), and a throwaway cluster needs none.
        cluster.start(
            PROCESS,
            [str(self.processes()[PROCESS]), "--fork", "--kill-child=SIGKILL", "--mount",
             "--propagation=private", "sh", "-c",
             f'mount -t overlay overlay -o {overlay} /etc && exec "$@"', "kueue",
             str(self.binaries()[PROCESS]), f"--kubeconfig={cluster.kubeconfig}",
             f"--config={folder / 'config.yaml'}"],
        )  # fmt: skip
        webhooks.wait_ready(cluster, PROCESS, probe_port, self.processes(), READY_TIMEOUT)
        cluster.apply(webhooks.configurations(NAMES, MUTATING, VALIDATING, port, ca_bundle))

        def suspended(done: Any) -> bool:
            return done.returncode == 0 and json.loads(done.stdout)["spec"].get("suspend") is True

        webhooks.wait_called(cluster, "Kueue", PROBE, suspended, READY_TIMEOUT)

    def stop(self, state: Path, pids: Mapping[str, int]) -> None:
        webhooks.delete(state, list(NAMES.items()))
