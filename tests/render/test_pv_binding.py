"""Each PersistentVolume binds to its own claim: by claimRef, or by a StorageClass of its own."""

from __future__ import annotations

import pytest

from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from tests.render.test_cephfs import findings, spec_text

SOURCES = [
    "nfs: {server: 10.0.0.1, path: /data}",
    "efs: {fileSystemId: fs-2cbf7385, path: /train}",
    "cephfs: {clusterID: c1, fsName: cephfs, secretName: s, secretNamespace: ceph}",
]


def spec(source: str, namespace: str | None = None, volume: str = "", extra: str = "") -> str:
    """A paddlejob whose volume data has ``source`` (and ``volume``'s own fields)."""
    text = f"{{name: data, mountPath: /data, {source}, capacity: 10Gi{volume}}}"
    return spec_text(text, namespace, extra)


def storage(text: str, env: str | None = None) -> tuple[dict, dict]:
    """The PersistentVolume and PersistentVolumeClaim ``text`` renders (in environment env)."""
    rendered = build.render_document(parse_spec(text, "spec.yaml"))
    manifests = rendered.environments[env] if env else rendered.manifests
    objects = {m.kind: m.obj for m in manifests}
    return objects["PersistentVolume"], objects["PersistentVolumeClaim"]


@pytest.mark.parametrize("source", SOURCES)
def test_a_spec_with_a_namespace_pre_binds_the_pv_to_its_claim(source):
    pv, claim = storage(spec(source, "team"))
    assert pv["spec"]["claimRef"] == {"name": "demo-data", "namespace": "team"}
    assert pv["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == ""
    assert claim["spec"]["volumeName"] == pv["metadata"]["name"] == "team-demo-data"


@pytest.mark.parametrize("source", SOURCES)
def test_a_spec_without_a_namespace_binds_by_a_class_of_the_pvs_own(source):
    pv, claim = storage(spec(source))
    assert "claimRef" not in pv["spec"]
    assert pv["metadata"]["name"] == "demo-data"
    assert pv["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == "demo-data"
    assert claim["spec"]["volumeName"] == "demo-data"


def test_a_class_the_spec_names_is_used_as_given_and_warned_about_without_a_namespace():
    text = spec(SOURCES[0], volume=", storageClassName: slow")
    pv, claim = storage(text)
    assert pv["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == "slow"
    assert [d.rule for d in findings(text)] == ["pv-binding"]
    namespaced = spec(SOURCES[0], "team", ", storageClassName: slow")
    pv, _ = storage(namespaced)
    assert (pv["spec"]["storageClassName"], pv["spec"]["claimRef"]["namespace"]) == ("slow", "team")
    assert findings(namespaced) == []


def test_an_overlay_that_gives_the_namespace_pre_binds_there():
    text = spec(SOURCES[0], extra="overlays:\n  prod: {metadata: {namespace: ml-prod}}\n")
    base_pv, _ = storage(text)
    pv, claim = storage(text, "prod")
    assert base_pv["spec"]["storageClassName"] == "demo-data"
    assert pv["spec"]["claimRef"] == {"name": "demo-data", "namespace": "ml-prod"}
    assert pv["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == ""
