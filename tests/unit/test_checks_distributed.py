"""Checks of distributed-job, dataPrep and shared volumes: message, position and rule."""

from __future__ import annotations

import pytest

from paddlegen.errors import SpecError
from tests.builders import DEMO, findings, render_file, rules

VOLUME = "  volumes: [{name: data, mountPath: /data, hostPath: {path: /mfs}}]\n"
SETTINGS = "  distributed: {volume: data, trainConfigDir: quick_start}\n"
JOB = "spec:\n  workload: job\n  image: img:1\n"


def distributed(extra: str = "", replicas: int = 1) -> str:
    return (
        "spec:\n  workload: distributed-job\n  image: img:1\n"
        f"  worker: {{replicas: {replicas}}}\n" + VOLUME + SETTINGS + extra
    )


def test_a_valid_single_pod_spec_has_no_findings():
    assert findings(distributed()) == []


def test_ps_and_heter_are_errors_explaining_every_pod_is_both():
    assert findings(distributed("  ps: {replicas: 2}\n  heter: {replicas: 1}\n")) == [
        "spec.yaml:10:3: error: $.spec.ps: workload 'distributed-job' has no 'ps' role: every pod "
        "runs both a pserver and a trainer (set worker.replicas to the number of pods, or use "
        "workload 'paddlejob' for separate pserver pods) [distributed-roles]",
        "spec.yaml:11:3: error: $.spec.heter: workload 'distributed-job' has no 'heter' role: "
        "every pod runs both a pserver and a trainer (set worker.replicas to the number of pods, "
        "or use workload 'paddlejob' for separate pserver pods) [distributed-roles]",
    ]


def test_volume_and_config_dir_are_required():
    body = "spec:\n  workload: distributed-job\n  image: img:1\n  distributed: {nic: eth1}\n"
    assert findings(body) == [
        "spec.yaml:7:3: error: $.spec.distributed: workload 'distributed-job' needs "
        "distributed.trainConfigDir: the image's start script stops when TRAIN_CONFIG_DIR is "
        "unset (the folder under <JOB_PATH>/<job name> holding the trainer config, e.g. "
        "trainConfigDir: quick_start) [distributed-required]",
        "spec.yaml:7:3: error: $.spec.distributed: workload 'distributed-job' needs "
        "distributed.volume: the image's start script stops when JOB_PATH is unset (the "
        "spec.volumes entry holding the data, e.g. volume: data) [distributed-required]",
    ]


def test_missing_distributed_section_points_at_spec():
    body = "spec:\n  workload: distributed-job\n  image: img:1\n"
    assert rules(body) == ["distributed-required", "distributed-required"]
    assert findings(body)[0].startswith("spec.yaml:4:1: error: $.spec: ")


def test_ports_beyond_65535_are_an_error_at_the_port():
    body = distributed().replace(
        "trainConfigDir: quick_start}",
        "trainConfigDir: quick_start,\n"
        "                port: 65533, portsNum: 2, portsNumSparse: 2}",
    )
    assert findings(body) == [
        "spec.yaml:10:23: error: $.spec.distributed.port: ports 65533..65536 (port + portsNum + "
        "portsNumSparse - 1) go beyond 65535 (use a port of at most 65532) [distributed-ports]"
    ]


def test_the_last_port_may_be_65535():
    body = distributed().replace(
        "trainConfigDir: quick_start}", "trainConfigDir: quick_start, port: 65532, portsNum: 4}"
    )
    assert findings(body) == []


def test_two_start_commands_are_an_error():
    body = distributed("  command: [a]\n").replace("quick_start}", "quick_start, command: [b]}")
    assert findings(body) == [
        "spec.yaml:9:60: error: $.spec.distributed.command: distributed.command and spec.command "
        "both set the start command (keep one of them) [distributed-command]"
    ]


def test_env_of_the_image_contract_cannot_be_set_by_hand():
    body = distributed("  env: [{name: JOB_NAMESPACE, value: default}, {name: OK, value: x}]\n")
    assert findings(body) == [
        "spec.yaml:10:16: error: $.spec.env[0].name: env 'JOB_NAMESPACE' is set by workload "
        "'distributed-job' from the pod's namespace (remove it here) [distributed-env]"
    ]


def test_distributed_settings_elsewhere_are_ignored_with_a_warning():
    body = JOB + VOLUME + SETTINGS
    assert findings(body) == [
        "spec.yaml:8:3: warning: $.spec.distributed: spec.distributed only applies to workload "
        "'distributed-job'; workload 'job' ignores it [workload-setting]"
    ]


HOST_PORT_WARNING = (
    "spec.yaml:7:22: warning: $.spec.worker.replicas: hostPorts allow one pod per node, so the "
    "3 pods need 3 nodes; if fewer fit, the pods that start wait for the rest forever (the image "
    "waits until every pod runs) (bound the wait with run.activeDeadlineSeconds, start all pods "
    "or none with scheduling.scheduler: volcano, or set distributed.hostPorts: false (every pod "
    "has its own IP)) [hostport-nodes]"
)


@pytest.mark.parametrize(
    ("extra", "warned"),
    [
        ("", True),
        ("  run: {activeDeadlineSeconds: 3600}\n", False),
        ("  scheduling: {scheduler: volcano}\n", False),
        ("  scheduling: {scheduler: volcano, minAvailable: 3}\n", False),
        ("  scheduling: {scheduler: volcano, minAvailable: 2}\n", True),  # a partial gang
    ],
)
def test_host_ports_warn_that_every_pod_needs_its_own_node_unless_the_wait_is_bounded(
    extra, warned
):
    assert findings(distributed(extra, replicas=3)) == ([HOST_PORT_WARNING] if warned else [])


def test_no_host_ports_no_warning():
    body = distributed(replicas=3).replace("quick_start}", "quick_start, hostPorts: false}")
    assert findings(body) == []


def test_warnings_reach_the_rendered_result(tmp_path):
    rendered = render_file(tmp_path, DEMO + distributed(replicas=3))
    assert [(w.severity, w.rule, w.line, w.col) for w in rendered.warnings] == [
        ("warning", "limits-missing", 4, 1),
        ("warning", "hostport-nodes", 7, 22),
    ]


def test_errors_stop_rendering(tmp_path):
    with pytest.raises(SpecError) as caught:
        render_file(tmp_path, DEMO + distributed("  ps: {replicas: 1}\n"))
    assert [d.rule for d in caught.value.diagnostics if d.is_error] == ["distributed-roles"]


def test_data_job_needs_an_image():
    body = (
        "spec:\n  workload: job\n  worker: {image: img:1}\n"
        + VOLUME
        + "  dataPrep: {volume: data}\n"
    )
    assert findings(body) == [
        "spec.yaml:8:3: error: $.spec.dataPrep: the data Job has no image: set dataPrep.image or "
        "spec.image [image-required]"
    ]


def test_split_count_other_than_the_trainers_warns():
    body = distributed(
        "  run: {activeDeadlineSeconds: 60}\n  dataPrep: {volume: data, splitCount: 2}\n",
        replicas=3,
    )
    assert findings(body) == [
        "spec.yaml:11:40: warning: $.spec.dataPrep.splitCount: splitCount 2 differs from the 3 "
        "trainers: trainer i reads part i, so trainers 2 and up get no data (leave splitCount out "
        "to split per trainer) [dataprep-layout]"
    ]


def test_data_on_another_volume_than_the_trainers_read_warns():
    body = distributed("  dataPrep: {volume: other}\n").replace(
        VOLUME,
        "  volumes: [{name: data, mountPath: /data, hostPath: {path: /mfs}},\n"
        "            {name: other, mountPath: /other, emptyDir: {}}]\n",
    )
    assert findings(body) == [
        "spec.yaml:11:22: warning: $.spec.dataPrep.volume: the data Job writes to volume 'other' "
        "but the trainers read volume 'data' (distributed.volume) (use volume 'data') "
        "[dataprep-layout]"
    ]


def test_out_dir_outside_the_job_folder_warns():
    body = distributed("  dataPrep: {volume: data, outDir: /data/elsewhere}\n")
    assert findings(body) == [
        "spec.yaml:10:36: warning: $.spec.dataPrep.outDir: the trainers read /data/demo "
        "(JOB_PATH/JOB_NAME), not this outDir (leave outDir out) [dataprep-layout]"
    ]
    assert findings(distributed("  dataPrep: {volume: data, outDir: /data/demo/}\n")) == []


NFS = """\
  volumes:
    - name: data
      mountPath: /nas
      nfs: {server: 10.12.201.10, path: /nas}
      capacity: 10Gi
      accessModes: [ReadWriteOnce]
"""


def test_read_write_once_shared_by_several_pods_warns_at_the_access_modes():
    body = (
        "spec:\n  workload: paddlejob\n  image: img:1\n  ps: {replicas: 2}\n"
        "  worker: {replicas: 2}\n" + NFS
    )
    assert findings(body) == [
        "spec.yaml:14:20: warning: $.spec.volumes[0].accessModes: ReadWriteOnce lets only one "
        "node mount volume 'data', but 4 pods share it; the others cannot mount it (use "
        "accessModes: [ReadWriteMany] (NFS, EFS and CephFS support it)) [volume-access-mode]"
    ]


DYNAMIC = "  volumes: [{name: d, mountPath: /d, dynamic: {}, capacity: 1Gi}]\n"


def test_a_shared_dynamic_volume_on_the_default_class_warns():
    body = JOB + "  worker: {replicas: 2}\n" + DYNAMIC
    assert [f for f in findings(body) if "rwx-storage-class" in f] == [
        "spec.yaml:8:47: warning: $.spec.volumes[0].dynamic: volume 'd' is shared by 2 pods, so "
        "asks for ReadWriteMany from the cluster's default StorageClass, which on most clusters "
        "cannot provide it (EBS, Persistent Disk, Azure Disk, local-path): the claim and the "
        "pods would stay Pending (set dynamic.storageClassName to a class that provides "
        "ReadWriteMany, such as an NFS, EFS, CephFS, Filestore or Azure Files one; or use an "
        "nfs, efs or cephfs volume) [rwx-storage-class]"
    ]


@pytest.mark.parametrize(
    ("replicas", "volume", "warns"),
    [
        (1, DYNAMIC, False),  # one pod: ReadWriteOnce, which every class provides
        (1, DYNAMIC.replace("capacity", "accessModes: [ReadWriteMany], capacity"), True),
        (2, DYNAMIC.replace("dynamic: {}", "dynamic: {storageClassName: nfs}"), False),
        (2, DYNAMIC.replace("dynamic: {}", "dynamic: {}, storageClassName: nfs"), False),
        (2, DYNAMIC.replace("capacity", "accessModes: [ReadOnlyMany], capacity"), False),
    ],
)
def test_rwx_storage_class_needs_read_write_many_and_no_class(replicas, volume, warns):
    body = JOB + f"  worker: {{replicas: {replicas}}}\n" + volume
    assert any("rwx-storage-class" in f for f in findings(body)) is warns


def test_the_data_job_counts_as_a_pod_sharing_the_volume():
    body = JOB + NFS.replace("ReadWriteOnce", "ReadWriteOncePod") + "  dataPrep: {volume: data}\n"
    assert findings(body) == [
        "spec.yaml:12:20: warning: $.spec.volumes[0].accessModes: ReadWriteOncePod lets only one "
        "pod mount volume 'data', but 2 pods including the data Job share it; the others cannot "
        "mount it (use accessModes: [ReadWriteMany] (NFS, EFS and CephFS support it)) "
        "[volume-access-mode]"
    ]


@pytest.mark.parametrize(
    "spec",
    [
        JOB + NFS,  # one pod
        "spec:\n  workload: paddlejob\n  image: img:1\n  worker: {replicas: 4}\n"
        + NFS.replace("[ReadWriteOnce]", "[ReadWriteOnce, ReadWriteMany]"),
    ],
)
def test_read_write_once_is_fine_for_one_pod_or_with_read_write_many(spec):
    assert findings(spec) == []
