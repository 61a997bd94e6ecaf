"""The bound `paddlegen kueue` writes on jobs whose pods never start, run by the real Kueue.

A control plane of its own with no node at all, so that an admitted job's pods stay Pending,
and Kueue v0.19.2 started with the manager configuration `paddlegen kueue` writes into the
ConfigMap kueue-system/kueue-manager-config (hack/localcluster/kueue.py GIVEN: the process is
served as the local cluster needs, every other setting is the file's). Kueue evicts the
queued collective-job when its pods are not ready in time, queues it again once, and then
deactivates it: it stops coming back, and gives its quota back."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from paddlegen.cli import cli
from paddlegen.gitops import kueue_manager
from paddlegen.gitops.kueue_install import MANIFESTS
from paddlegen.pipeline import build
from tests.cluster.conftest import Kube, local_cluster
from tests.cluster.test_kueue import queued_render, workload
from tests.cluster.test_paddleflow import get, wait_for
from tests.conftest import EXAMPLES

TEAM = "ready-team"
SETUP = f"""\
apiVersion: setup.paddlegen/v1
kind: KueueSetup
flavors: [{{name: default}}]
teams:
  - name: {TEAM}
    namespaces: [{TEAM}]
    quotas: {{default: {{cpu: 8, memory: 16Gi, nvidia.com/gpu: 4}}}}
waitForPodsReady:
  timeout: 4s
  backoffLimitCount: 1
  backoffBaseSeconds: 1
  backoffMaxSeconds: 1
"""
DEACTIVATED = "exceeding the maximum number of re-queuing retries"  # workload_controller.go:1287


@pytest.fixture
def bounded(tmp_path: Path, runner) -> Iterator[tuple[Kube, Path]]:
    """The cluster, and the folder `paddlegen kueue` wrote; always stopped at the end."""
    hack = local_cluster()
    absent = hack.missing(["kueue"])
    if absent:
        message = f"not built ({', '.join(absent)}): hack/local-cluster build --with kueue"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    setup, out = tmp_path / "kueue.yaml", tmp_path / "kueue"
    setup.write_text(SETUP, encoding="utf-8")
    result = runner.invoke(cli, ["kueue", str(setup), "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(
        (out / f"v1_configmap_{MANIFESTS.namespace}_{MANIFESTS.config_map}.yaml").read_text()
    )
    state = tmp_path / "cluster"
    state.mkdir()
    configuration = yaml.safe_load(written["data"][kueue_manager.KEY])
    (state / hack.kueue.GIVEN).write_text(json.dumps(configuration), encoding="utf-8")
    try:
        try:
            cluster = hack.up(state, extras=["kueue"])
        except hack.ClusterError as exc:
            pytest.fail(f"hack/local-cluster up --with kueue: {exc}")
        yield Kube(cluster.kubectl, cluster.env(), cluster.server, cluster.token, state), out
    finally:
        hack.down(state)


def test_a_job_whose_pods_never_start_is_requeued_a_bounded_number_of_times(bounded):
    kube, out = bounded
    kube.run("create", "namespace", MANIFESTS.namespace)
    kube.run("create", "namespace", TEAM)
    kube.run("apply", "--server-side", "-k", str(out))  # the ConfigMap too: a valid object
    data = yaml.safe_load((EXAMPLES / "collective-resnet.yaml").read_text())
    data["metadata"]["namespace"] = TEAM
    rendered = queued_render(data, TEAM)
    kube.apply(build.manifest_stream([rendered]))
    name = data["metadata"]["name"]

    def deactivated() -> dict[str, Any] | None:
        """The Workload once Kueue deactivated it and said why: it sets spec.active first and
        the Evicted condition in a status update of its own after it."""
        found = workload(kube, TEAM, "Job", name)
        if not found or found["spec"].get("active") is not False:
            return None
        conditions = found.get("status", {}).get("conditions", [])
        evicted = any(c["type"] == "Evicted" and c["status"] == "True" for c in conditions)
        return found if evicted else None

    found = wait_for("the Workload deactivated by Kueue", deactivated, timeout=90)
    evicted = next(c for c in found["status"]["conditions"] if c["type"] == "Evicted")
    assert (evicted["status"], evicted["reason"]) == (
        "True",
        "DeactivatedDueToRequeuingLimitExceeded",
    )
    assert DEACTIVATED in evicted["message"]
    # evicted once for pods not ready, queued again once (backoffLimitCount), then no more
    evictions = {e["reason"]: e["count"] for e in found["status"]["schedulingStats"]["evictions"]}
    assert evictions["PodsReadyTimeout"] == 1, evictions

    def released() -> bool:
        reserved = next(
            (c for c in workload(kube, TEAM, "Job", name)["status"]["conditions"]
             if c["type"] == "QuotaReserved"),
            None,
        )  # fmt: skip
        return reserved is None or reserved["status"] == "False"

    wait_for("the quota given back", released)
    assert get(kube, TEAM, "jobs", name)["spec"]["suspend"] is True  # it waits for a person
