"""A PersistentVolume of a spec without a namespace binds to its own claim and to no other,
held to the real PV controller (kube-controller-manager): the namespace is decided at apply
time by a kustomization around paddlegen's folder, so the PV has no claimRef, and its class of
its own keeps a claim that waits for any class-less volume from taking it. A class-less twin,
as paddlegen rendered it before, is taken by that claim."""

from __future__ import annotations

import json
import subprocess
import time

import yaml

from paddlegen.pipeline import build, write
from tests.cluster.conftest import Kube
from tests.cluster.test_paddleflow import wait_for
from tests.conftest import require_tool

NAMESPACE = "pv-binding"
SPEC = (
    "apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {name: binding}\nspec:\n"
    "  workload: paddlejob\n"
    "  image: r/train:v1\n  resources: {limits: {memory: 1Gi}}\n  volumes: [{name: data, "
    "mountPath: /data, nfs: {server: 10.0.0.1, path: /data}, capacity: 10Gi}]\n"
)
# Waits for any class-less volume of 10Gi or more (no default StorageClass here).
GREEDY = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "greedy", "namespace": NAMESPACE},
    "spec": {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "",
    },
}


def _status(kube: Kube, *what: str) -> dict:
    return json.loads(kube.run("get", *what, "-o", "json").stdout)


def _built(tmp_path) -> dict[str, dict]:
    """paddlegen's folder built by a kustomization that sets the namespace, by kind."""
    spec = tmp_path / "binding.yaml"
    spec.write_text(SPEC)
    write.write_rendered(build.render_specs([spec]), tmp_path / "deploy")
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "kustomization.yaml").write_text(
        f"namespace: {NAMESPACE}\nresources: [../deploy/binding]\n"
    )
    built = subprocess.run(
        [require_tool("kustomize"), "build", str(tmp_path / "team")],
        capture_output=True,
        text=True,
        check=True,
    )
    return {d["kind"]: d for d in yaml.safe_load_all(built.stdout)}


def test_a_pv_without_a_namespace_binds_its_own_claim_and_no_other(kube: Kube, tmp_path):
    objects = _built(tmp_path)
    pv, claim = objects["PersistentVolume"], objects["PersistentVolumeClaim"]
    assert "claimRef" not in pv["spec"] and claim["metadata"]["namespace"] == NAMESPACE
    twin = {
        **pv,
        "metadata": {"name": "binding-twin"},
        "spec": {**pv["spec"], "storageClassName": ""},
    }
    kube.run("create", "namespace", NAMESPACE)
    try:
        kube.apply(yaml.safe_dump(GREEDY))
        kube.apply(yaml.safe_dump_all([pv, twin]))
        # The controller resyncs unbound claims every 15 s: the greedy claim takes the twin.
        wait_for(
            "the greedy claim to bind",
            lambda: _status(kube, "-n", NAMESPACE, "pvc", "greedy")["spec"].get("volumeName"),
            timeout=60,
        )
        assert _status(kube, "-n", NAMESPACE, "pvc", "greedy")["spec"]["volumeName"] == (
            "binding-twin"
        )
        time.sleep(1)  # let the controller write the twin's binding
        assert _status(kube, "pv", pv["metadata"]["name"])["status"]["phase"] == "Available"
        kube.apply(yaml.safe_dump(claim))
        wait_for(
            "paddlegen's claim to bind",
            lambda: (
                _status(kube, "-n", NAMESPACE, "pvc", claim["metadata"]["name"])
                .get("status", {})
                .get("phase")
                == "Bound"
            ),
            timeout=60,
        )
        ref = _status(kube, "pv", pv["metadata"]["name"])["spec"]["claimRef"]
        assert (ref["namespace"], ref["name"]) == (NAMESPACE, claim["metadata"]["name"])
    finally:
        kube.run("delete", "namespace", NAMESPACE, "--wait=false", check=False)
        kube.run(
            "delete", "pv", pv["metadata"]["name"], "binding-twin", "--wait=false", check=False
        )
