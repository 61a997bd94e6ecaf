"""The two rules of cephfs volumes, held to a real API server: the in-tree form draws the
server's deprecation warning (cephfs-in-tree says it first), and a CSI volume whose Secret has
no namespace is accepted, so paddlegen must refuse it itself (cephfs-secret-namespace): the
kubelet would look the Secret up in no namespace, and the volume would never mount."""

from __future__ import annotations

import subprocess

from paddlegen.pipeline import build
from paddlegen.render.engine import Manifest
from paddlegen.spec.loader import parse_spec
from tests.cluster.conftest import Kube
from tests.cluster.test_examples import FIELD_MANAGER, warnings


def persistent_volume(cephfs: str, metadata: str = "{name: ceph}") -> Manifest:
    """The PersistentVolume a one-volume spec renders (validated or not: rendered as is)."""
    text = (
        f"apiVersion: paddlegen/v1\nkind: TrainingJob\nmetadata: {metadata}\nspec:\n"
        f"  workload: paddlejob\n"
        "  image: r/x:v1\n  resources: {limits: {memory: 1Gi}}\n"
        f"  volumes: [{{name: data, mountPath: /data, cephfs: {cephfs}, capacity: 1Gi}}]\n"
    )
    doc = parse_spec(text, "ceph.yaml")
    (pv,) = [m for m in build.render_valid(doc).manifests if m.kind == "PersistentVolume"]
    return pv


def dry_run(kube: Kube, pv: Manifest) -> subprocess.CompletedProcess[str]:
    return kube.run(
        "apply", "--dry-run=server", "--server-side", FIELD_MANAGER, "-f", "-",
        stdin=pv.text(), check=False,
    )  # fmt: skip


def test_the_in_tree_form_draws_the_servers_deprecation_warning(kube: Kube):
    pv = persistent_volume("{inTree: true, monitors: ['172.19.32.166:6789'], secretName: s}")
    done = dry_run(kube, pv)
    assert done.returncode == 0, done.stderr
    assert warnings(done.stderr) == ["spec.cephfs: deprecated in v1.28, non-functional in v1.31+"]


def test_the_csi_form_is_accepted_without_a_warning(kube: Kube):
    pv = persistent_volume("{clusterID: c1, fsName: cephfs, secretName: s, secretNamespace: ns}")
    done = dry_run(kube, pv)
    assert done.returncode == 0, done.stderr
    assert warnings(done.stderr) == []


def test_the_server_takes_a_csi_secret_reference_without_a_namespace(kube: Kube):
    # What a silenced cephfs-secret-namespace renders (the job has no namespace to default
    # to): the server does not validate nodeStageSecretRef, so only paddlegen's rule stops it.
    pv = persistent_volume("{clusterID: c1, fsName: cephfs, secretName: s}")
    assert pv.obj["spec"]["csi"]["nodeStageSecretRef"] == {"name": "s"}
    done = dry_run(kube, pv)
    assert done.returncode == 0, done.stderr
    assert warnings(done.stderr) == []
