"""cephfs volumes: the CSI driver's static PV by default, the in-tree plugin only when asked for."""

from __future__ import annotations

from typing import Any

import pytest

from paddlegen.authoring.explain import explain
from paddlegen.errors import Diagnostic
from paddlegen.pipeline import build, load
from paddlegen.spec.loader import parse_spec
from paddlegen.spec.model import CEPHFS_CSI_DRIVER
from paddlegen.validate import inputs as validation
from tests.builders import HEADER

CSI = "{clusterID: ceph-a, fsName: cephfs, secretName: ceph-user}"
IN_TREE = "{inTree: true, monitors: ['172.19.32.166:6789'], user: paddle, secretName: ceph-user}"


def spec_text(volume: str, namespace: str | None = "team", extra: str = "") -> str:
    """A paddlejob with one volume (flow-style YAML ``volume``), memory limit set."""
    meta = f"{{name: demo, namespace: {namespace}}}" if namespace else "{name: demo}"
    return (
        f"{HEADER}metadata: {meta}\nspec:\n  image: r/demo:v1\n"
        f"  resources: {{limits: {{memory: 1Gi}}}}\n  volumes:\n    - {volume}\n"
        f"  workload: paddlejob\n{extra}"
    )


def cephfs_volume(cephfs: str, more: str = "") -> str:
    return f"{{name: data, mountPath: /data, cephfs: {cephfs}, capacity: 10Gi{more}}}"


def findings(text: str) -> list[Diagnostic]:
    return load.validate_document(parse_spec(text, "spec.yaml"))


def objects(text: str) -> dict[str, dict[str, Any]]:
    """The objects of a spec that validates without errors, by kind (the base's)."""
    doc = parse_spec(text, "spec.yaml")
    assert not [d for d in load.validate_document(doc) if d.is_error]
    return {m.kind: m.obj for m in build.render_document(doc).manifests}


def test_a_cephfs_volume_is_a_static_volume_of_the_csi_driver():
    pv = objects(spec_text(cephfs_volume(CSI)))["PersistentVolume"]
    assert pv["metadata"]["name"] == "team-demo-data"
    assert pv["spec"]["csi"] == {
        "driver": CEPHFS_CSI_DRIVER,
        "volumeHandle": "team-demo-data",  # the PV's name: unique among the driver's volumes
        "volumeAttributes": {
            "clusterID": "ceph-a",
            "fsName": "cephfs",
            "rootPath": "/",  # path's default, the file system's root
            "staticVolume": "true",  # a string: volumeAttributes is a map of strings
        },
        "nodeStageSecretRef": {"name": "ceph-user", "namespace": "team"},
    }
    assert "cephfs" not in pv["spec"]
    assert CEPHFS_CSI_DRIVER == "cephfs.csi.ceph.com"


def test_the_csi_pv_is_bound_to_its_claim_like_every_pv_paddlegen_makes():
    nfs = objects(
        spec_text("{name: data, mountPath: /data, nfs: {server: s, path: /x}, capacity: 10Gi}")
    )
    ceph = objects(spec_text(cephfs_volume(CSI)))
    assert ceph["PersistentVolumeClaim"] == nfs["PersistentVolumeClaim"]
    source = {"csi", "nfs"}
    same = {k: v for k, v in nfs["PersistentVolume"]["spec"].items() if k not in source}
    assert {k: v for k, v in ceph["PersistentVolume"]["spec"].items() if k not in source} == same
    assert same["claimRef"] == {"name": "demo-data", "namespace": "team"}
    assert same["storageClassName"] == "" and same["persistentVolumeReclaimPolicy"] == "Retain"
    assert ceph["PersistentVolumeClaim"]["spec"]["volumeName"] == "team-demo-data"


def test_path_secret_namespace_class_options_and_read_only_reach_the_pv():
    cephfs = (
        "{clusterID: ceph-a, fsName: cephfs, secretName: ceph-user, "
        "secretNamespace: ceph-csi, path: /volumes/g/sub/0c6f}"
    )
    more = ", readOnly: true, storageClassName: ceph, mountOptions: [noatime]"
    found = objects(spec_text(cephfs_volume(cephfs, more)))
    pv = found["PersistentVolume"]["spec"]
    assert pv["csi"]["volumeAttributes"]["rootPath"] == "/volumes/g/sub/0c6f"
    assert pv["csi"]["nodeStageSecretRef"] == {"name": "ceph-user", "namespace": "ceph-csi"}
    assert pv["csi"]["readOnly"] is True
    assert (pv["storageClassName"], pv["mountOptions"]) == ("ceph", ["noatime"])
    assert found["PersistentVolumeClaim"]["spec"]["storageClassName"] == "ceph"
    pod = found["PaddleJob"]["spec"]["worker"]["template"]["spec"]
    claim = {"claimName": "demo-data", "readOnly": True}
    assert pod["volumes"] == [{"name": "data", "persistentVolumeClaim": claim}]


def test_an_environment_with_its_own_namespace_moves_the_secret_reference_too():
    text = spec_text(cephfs_volume(CSI), extra="overlays:\n  prod: {metadata: {namespace: ml}}\n")
    rendered = build.render_document(parse_spec(text, "spec.yaml"))
    (pv,) = [m.obj for m in rendered.environments["prod"] if m.kind == "PersistentVolume"]
    assert pv["spec"]["csi"]["nodeStageSecretRef"] == {"name": "ceph-user", "namespace": "ml"}
    assert pv["spec"]["csi"]["volumeHandle"] == pv["metadata"]["name"] == "ml-demo-data"


def test_the_in_tree_plugin_renders_only_when_asked_for():
    cephfs = IN_TREE.replace("}", ", secretNamespace: ceph-csi, path: /train}")
    pv = objects(spec_text(cephfs_volume(cephfs, ", readOnly: true")))["PersistentVolume"]
    assert pv["spec"]["cephfs"] == {
        "monitors": ["172.19.32.166:6789"],
        "path": "/train",
        "user": "paddle",
        "secretRef": {"name": "ceph-user", "namespace": "ceph-csi"},
        "readOnly": True,
    }
    assert "csi" not in pv["spec"]
    bare = objects(spec_text(cephfs_volume("{inTree: true, monitors: ['m:6789']}")))
    assert bare["PersistentVolume"]["spec"]["cephfs"] == {
        "monitors": ["m:6789"],
        "path": "/",
        "user": "admin",  # the in-tree plugin's own default
    }


def test_the_in_tree_plugin_is_warned_about_at_the_volume():
    text = spec_text("{name: a, mountPath: /a, emptyDir: {}}\n    - " + cephfs_volume(IN_TREE))
    (found,) = findings(text)
    assert (found.severity, found.rule, found.path) == (
        "warning",
        "cephfs-in-tree",
        "$.spec.volumes[1]",
    )
    assert found.line == 9  # the volume's line: `- {name: data, ...}`
    assert found.message == (
        "volume 'data' uses the in-tree CephFS plugin (PV spec.cephfs): Kubernetes deprecated "
        "it in 1.28, and from 1.31 it does nothing (pods cannot mount the volume)"
    )
    assert found.hint == (
        "use the CephFS CSI driver, cephfs.csi.ceph.com: drop inTree, monitors and user, and "
        "set clusterID, fsName and secretName, a Secret with userID and userKey"
    )
    assert findings(text + "ignore: [{rule: cephfs-in-tree, path: '$.spec.volumes[1]'}]\n") == []


def test_the_csi_form_warns_about_nothing():
    assert findings(spec_text(cephfs_volume(CSI))) == []


def test_a_csi_secret_needs_a_namespace_to_be_found_in():
    (found,) = findings(spec_text(cephfs_volume(CSI), namespace=None))
    assert (found.severity, found.rule) == ("error", "cephfs-secret-namespace")
    assert found.path == "$.spec.volumes[0].cephfs.secretName"
    assert "needs the namespace of its Secret 'ceph-user'" in found.message
    assert found.hint == "set cephfs.secretNamespace (where the Secret is), or metadata.namespace"
    own = CSI.replace("}", ", secretNamespace: ceph-csi}")
    assert findings(spec_text(cephfs_volume(own), namespace=None)) == []
    # the in-tree plugin defaults to the pod's namespace itself
    assert {d.rule for d in findings(spec_text(cephfs_volume(IN_TREE), namespace=None))} == {
        "cephfs-in-tree"
    }


def schema_errors(cephfs: str) -> list[tuple[str, str]]:
    return [
        (d.path, d.message)
        for d in findings(spec_text(cephfs_volume(cephfs)))
        if d.rule == "schema"
    ]


HERE = "$.spec.volumes[0].cephfs"


@pytest.mark.parametrize(
    ("cephfs", "missing"),
    [
        ("{clusterID: c}", ["fsName", "secretName"]),
        ("{fsName: f, secretName: s}", ["clusterID"]),
        ("{}", ["clusterID", "fsName", "secretName"]),
        ("{inTree: false, clusterID: c, fsName: f}", ["secretName"]),
        ("{inTree: true}", ["monitors"]),
        ("{inTree: true, secretName: s, path: /x}", ["monitors"]),
    ],
)
def test_each_form_requires_its_fields(cephfs, missing):
    assert schema_errors(cephfs) == [(HERE, f"missing required field '{m}'") for m in missing]


def test_the_seeds_monitors_without_in_tree_get_one_message_naming_both_ways():
    seed = "{monitors: ['172.19.32.166:6789'], user: admin, secretName: cephfs-secret, path: /}"
    (found,) = findings(spec_text(cephfs_volume(seed)))
    assert (found.rule, found.path, found.line, found.col) == ("schema", HERE, 8, 38)  # the key
    assert found.message.startswith(
        "monitors and user are fields of the in-tree CephFS plugin, which Kubernetes deprecated "
        "in 1.28 and which does nothing from 1.31; paddlegen renders it only with inTree: true"
    )
    assert "replace monitors and user with clusterID, fsName and secretName" in found.hint
    assert "add inTree: true" in found.hint
    # the same for the CSI form with a leftover of the in-tree one
    (found,) = findings(spec_text(cephfs_volume(CSI.replace("}", ", user: admin}"))))
    assert found.message.startswith("monitors and user are fields of the in-tree CephFS plugin")


def test_the_in_tree_form_refuses_the_csi_drivers_fields():
    assert schema_errors(IN_TREE.replace("}", ", clusterID: c}")) == [
        (
            HERE,
            "clusterID and fsName are fields of the CephFS CSI driver, but inTree: true renders "
            "the in-tree plugin, which has neither",
        )
    ]


def test_explain_documents_both_forms():
    doc = explain("spec.volumes.cephfs")
    assert list(doc.children) == [
        "clusterID",
        "fsName",
        "path",
        "secretName",
        "secretNamespace",
        "inTree",
        "monitors",
        "user",
    ]
    assert "cephfs.csi.ceph.com" in doc.node["description"]
    assert "volumeAttributes.rootPath" in doc.children["path"]["description"]
    assert doc.children["monitors"]["description"].startswith("In-tree plugin only")
    assert "nodeStageSecretRef.namespace" in doc.children["secretNamespace"]["description"]


def test_the_rendered_csi_pv_passes_the_manifest_validation():
    from paddlegen.validate.inprocess import validate_in_process

    doc = parse_spec(spec_text(cephfs_volume(CSI)), "spec.yaml")
    files = validation.manifest_files([build.render_document(doc)], "deploy")
    assert any("driver: cephfs.csi.ceph.com" in text for _, text in files)
    assert validate_in_process(files) == []
