"""Volcano (`--with volcano`): real gang scheduling. vc-scheduler admits and places whole
PodGroups; the controller manager keeps Queues' state and makes PodGroups for plain pods
that name the scheduler."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from . import controlplane
from .base import TOOLS, Cluster, ClusterError, Component, GoBuild, tail

# vc-scheduler's configuration: Volcano's own default, its Helm chart's
# installer/helm/chart/volcano/config/volcano-scheduler.conf at the pinned tag, and the
# `network-topology-aware` plugin, which the chart leaves out. `enqueue` admits a PodGroup
# (Pending -> Inqueue) only when its minResources fit what the queue and the cluster have
# left; `gang` lets `allocate` bind a job's pods only when minMember of them fit; a PodGroup's
# hard network topology (one HyperNode of its highest tier or lower) is kept only through
# that plugin's HyperNode gradient function (pkg/scheduler/plugins/network-topology-aware/
# network_topology_aware.go:278-291; without it `allocate` tries the whole cluster,
# framework/session_plugins.go:1048-1067). For a PodGroup without network topology it only
# scores nodes, and there are no HyperNodes unless a test makes some.
SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""
# The Volcano CRDs only Volcano itself needs (PodGroup is in hack/crds with the others).
CRDS = TOOLS / "volcano" / "crds"


class Volcano(Component):
    name = "volcano"
    go = GoBuild(
        "volcano",
        "volcano.sh/volcano",
        ("volcano.sh/volcano/cmd/scheduler", "volcano.sh/volcano/cmd/controller-manager"),
        ("vc-scheduler", "vc-controller-manager"),
    )

    def start(self, cluster: Cluster) -> None:
        """vc-scheduler and vc-controller-manager, the way Volcano's chart runs them, minus
        what needs a pod network or more CRDs: no webhook manager (its admission checks do
        not run), no metrics or health ports, and only the PodGroup and Queue controllers."""
        paths = self.binaries()
        controlplane.install_crds(cluster, sorted(CRDS.glob("*.yaml")))
        # vc-scheduler alone answers to `volcano`
        controlplane.start_kube_scheduler(cluster, stand_in=False)
        conf = Path(cluster.state) / "vc-scheduler.conf"
        conf.write_text(SCHEDULER_CONF, encoding="utf-8")
        kubeconfig = f"--kubeconfig={cluster.kubeconfig}"
        cluster.start(
            "vc-scheduler",
            [
                str(paths["vc-scheduler"]),
                kubeconfig,
                f"--scheduler-conf={conf}",
                "--leader-elect=false",
                "--cache-dumper=false",
                # Numatopology objects come from Volcano's node agent, which does not run here
                # (nor does its CRD: an informer on a missing CRD never syncs).
                "--feature-gates=ResourceTopology=false",
            ],
        )
        cluster.start(
            "vc-controller-manager",
            [
                str(paths["vc-controller-manager"]),
                kubeconfig,
                "--leader-elect=false",
                # PodGroups for pods and Jobs that name the scheduler; Queue state and counts.
                "--controllers=pg-controller,queue-controller",
                "--feature-gates=QueueCommandSync=false",  # no bus.volcano.sh Command CRD here
            ],
        )
        wait_open_queue(cluster, paths)


def wait_open_queue(cluster: Cluster, paths: dict[str, Path], timeout: float = 60.0) -> None:
    """Wait for the `default` Queue (vc-scheduler creates it, the queue controller opens it):
    a PodGroup in a queue that is not there yet is not scheduled."""
    deadline = time.monotonic() + timeout
    # By its full name: `queue` is also a short name of Kueue's LocalQueue (its CRD is among
    # hack/crds), which kubectl's short-name expansion may pick first; the `default` it then
    # looked up never became Open ("not Open in 60 s" when Volcano started after Kueue).
    queue = "queues.scheduling.volcano.sh"
    argv = [cluster.kubectl, "get", queue, "default", "-o", "jsonpath={.status.state}"]
    while time.monotonic() < deadline:
        cluster.check_alive(paths)
        done = subprocess.run(argv, env=cluster.env(), capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout == "Open":
            return
        time.sleep(0.2)
    raise ClusterError(
        f"Volcano's default Queue was not Open in {timeout:.0f} s:\n"
        + tail(Path(cluster.state) / "vc-scheduler.log")
    )
