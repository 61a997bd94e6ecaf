"""`paddlegen import` of CephFS storage: a static PV of the CephFS CSI driver comes back as a
cephfs volume, the in-tree plugin's as one with inTree: true, anything else stays a claim."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from paddlegen.authoring.importer import import_manifests
from tests.builders import diagnostics, rendered_objects

JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "demo", "namespace": "team"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "paddle",
                        "image": "r/demo:v1",
                        "resources": {"limits": {"memory": "1Gi"}},
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    }
                ],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                "restartPolicy": "Never",
            }
        }
    },
}
CLAIM = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "team"},
    "spec": {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "",
        "volumeName": "ceph-static",
    },
}
CSI = {
    "driver": "cephfs.csi.ceph.com",
    "volumeHandle": "ceph-static",
    "volumeAttributes": {
        "clusterID": "ceph-a",
        "fsName": "cephfs",
        "rootPath": "/volumes/g/sub/0c6f",
        "staticVolume": "true",
    },
    "nodeStageSecretRef": {"name": "ceph-user", "namespace": "team"},
}


def volume_stream(source: dict[str, Any]) -> str:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "ceph-static"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            **source,
        },
    }
    return yaml.safe_dump_all([JOB, CLAIM, pv])


def imported(source: dict[str, Any]):
    return import_manifests([("in.yaml", volume_stream(source))])


def test_a_static_csi_volume_comes_back_as_a_cephfs_volume():
    result = imported({"csi": CSI})
    (volume,) = result.spec["spec"]["volumes"]
    assert volume["cephfs"] == {
        "clusterID": "ceph-a",
        "fsName": "cephfs",
        "secretName": "ceph-user",  # in the job's namespace: no secretNamespace needed
        "path": "/volumes/g/sub/0c6f",
    }
    assert result.lossy == []
    # the handle was the PV's name, which paddlegen derives anew (and uses as the handle)
    assert "PersistentVolume/ceph-static: renamed team-demo-data (paddlegen derives the name)" in [
        str(n) for n in result.notes
    ]
    (pv,) = [
        o for (kind, _), o in rendered_objects(result.text).items() if kind == "PersistentVolume"
    ]
    assert pv["spec"]["csi"] == {**CSI, "volumeHandle": "team-demo-data"}


def test_a_secret_elsewhere_a_read_only_volume_and_another_handle_are_carried_over():
    csi = copy.deepcopy(CSI)
    csi["nodeStageSecretRef"]["namespace"] = "ceph-csi"
    csi["volumeHandle"] = "subvolume-17"
    csi["readOnly"] = True
    result = imported({"csi": csi})
    (volume,) = result.spec["spec"]["volumes"]
    assert volume["cephfs"]["secretNamespace"] == "ceph-csi"
    assert volume["readOnly"] is True
    assert result.lossy == []
    assert (
        'PersistentVolume/ceph-static: volumeHandle "subvolume-17" not kept: paddlegen uses the '
        "PersistentVolume's name as the handle, unique among the driver's volumes"
    ) in [str(n) for n in result.notes]


def test_attributes_paddlegen_does_not_write_are_listed_as_lost():
    csi = copy.deepcopy(CSI)
    csi["volumeAttributes"]["mounter"] = "fuse"
    result = imported({"csi": csi})
    assert "clusterID" in result.spec["spec"]["volumes"][0]["cephfs"]
    assert [str(n) for n in result.lossy] == [
        'PersistentVolume/ceph-static: spec.csi.volumeAttributes.mounter = "fuse": not carried over'
    ]


def test_a_provisioned_or_incomplete_csi_volume_stays_a_claim():
    provisioned = copy.deepcopy(CSI)
    del provisioned["volumeAttributes"]["staticVolume"]  # made by the driver's provisioner
    no_secret = copy.deepcopy(CSI)
    del no_secret["nodeStageSecretRef"]
    other = {**CSI, "driver": "nfs.csi.k8s.io"}
    for csi in (provisioned, no_secret, other):
        result = imported({"csi": csi})
        assert result.spec["spec"]["volumes"][0]["claim"] == {"name": "data"}


def test_an_in_tree_volume_comes_back_asking_for_the_in_tree_plugin():
    tree = {
        "monitors": ["172.19.32.166:6789"],
        "path": "/",
        "user": "admin",
        "secretRef": {"name": "cephfs-secret", "namespace": "ceph-csi"},
    }
    result = imported({"cephfs": tree})
    (volume,) = result.spec["spec"]["volumes"]
    assert volume["cephfs"] == {
        "inTree": True,
        "monitors": ["172.19.32.166:6789"],
        "user": "admin",
        "path": "/",
        "secretName": "cephfs-secret",
        "secretNamespace": "ceph-csi",
    }
    assert result.lossy == []
    assert [(d.severity, d.rule) for d in diagnostics(result.text)] == [
        ("warning", "cephfs-in-tree")
    ]
