"""efs volumes: the EFS CSI driver's PV by default, the NFS mount with nfs: true, and `import`."""

from __future__ import annotations

import pytest

from paddlegen.authoring.importer import import_manifests
from paddlegen.render.engine import EFS_MOUNT_OPTIONS
from paddlegen.spec.model import EFS_CSI_DRIVER
from tests.render.test_cephfs import findings, objects, spec_text
from tests.unit.test_import_cephfs import volume_stream


def efs_volume(efs: str) -> str:
    return f"{{name: data, mountPath: /data, efs: {efs}, capacity: 10Gi}}"


@pytest.mark.parametrize(
    ("path", "handle"), [("/", "fs-2cbf7385"), ("/train/a", "fs-2cbf7385:/train/a")]
)
def test_an_efs_volume_is_a_volume_of_the_csi_driver(path, handle):
    pv = objects(spec_text(efs_volume(f"{{fileSystemId: fs-2cbf7385, path: {path}}}")))[
        "PersistentVolume"
    ]
    assert pv["spec"]["csi"] == {"driver": EFS_CSI_DRIVER, "volumeHandle": handle}
    assert "nfs" not in pv["spec"] and "mountOptions" not in pv["spec"]
    assert EFS_CSI_DRIVER == "efs.csi.aws.com"


def test_nfs_true_mounts_it_over_nfs_with_aws_mount_options():
    volume = efs_volume("{fileSystemId: fs-2cbf7385, region: us-west-2, nfs: true}")
    pv = objects(spec_text(volume))["PersistentVolume"]
    assert pv["spec"]["nfs"] == {"server": "fs-2cbf7385.efs.us-west-2.amazonaws.com", "path": "/"}
    assert pv["spec"]["mountOptions"] == EFS_MOUNT_OPTIONS
    assert "csi" not in pv["spec"]


def test_a_region_without_nfs_is_refused_with_both_ways_out():
    (error,) = findings(spec_text(efs_volume("{fileSystemId: fs-2cbf7385, region: us-west-2}")))
    assert (error.line, error.rule, error.path) == (8, "schema", "$.spec.volumes[0].efs")
    assert "region names the NFS server of the NFS form (nfs: true)" in error.message
    assert error.hint == (
        "remove region to mount through the CSI driver (efs.csi.aws.com), or add nfs: true to "
        "keep the NFS mount"
    )
    (missing,) = findings(spec_text(efs_volume("{fileSystemId: fs-2cbf7385, nfs: true}")))
    assert missing.message == "missing required field 'region'"


@pytest.mark.parametrize(
    ("source", "efs"),
    [
        ({"csi": {"driver": "efs.csi.aws.com", "volumeHandle": "fs-2cbf7385:/data"}},
         {"fileSystemId": "fs-2cbf7385", "path": "/data"}),
        ({"nfs": {"server": "fs-2cbf7385.efs.us-west-2.amazonaws.com", "path": "/"},
          "mountOptions": EFS_MOUNT_OPTIONS},
         {"fileSystemId": "fs-2cbf7385", "region": "us-west-2", "path": "/", "nfs": True}),
    ],
    ids=["csi", "nfs"],
)  # fmt: skip
def test_import_reads_either_form_back(source, efs):
    result = import_manifests([("in.yaml", volume_stream(source))])
    (volume,) = result.spec["spec"]["volumes"]
    assert volume["efs"] == efs
    assert "mountOptions" not in volume
    assert result.lossy == []


def test_an_access_point_has_no_spec_form_and_stays_a_claim():
    handle = "fs-2cbf7385::fsap-0123456789abcdef0"
    source = {"csi": {"driver": "efs.csi.aws.com", "volumeHandle": handle}}
    result = import_manifests([("in.yaml", volume_stream(source))])
    assert result.spec["spec"]["volumes"][0]["claim"] == {"name": "data"}
