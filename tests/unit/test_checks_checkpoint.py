"""Checks of spec.checkpoint and spec.run.restarts: message, position and rule."""

from __future__ import annotations

import pytest

from tests.unit.test_checks_distributed import findings

SPEC = "spec:\n  workload: job\n  image: img:1\n  resources: {limits: {memory: 1Gi}}\n"


def volume(source: str, extra: str = "") -> str:
    return f"  volumes: [{{name: ckpt, mountPath: /ckpt, {source}{extra}}}]\n"


NFS = "capacity: 1Gi, accessModes: [ReadWriteMany], nfs: {server: s, path: /x}"


def test_a_checkpoint_on_a_shared_volume_has_no_findings():
    assert findings(SPEC + volume(NFS) + "  checkpoint: {volume: ckpt, path: a/b}\n") == []


@pytest.mark.parametrize(
    ("source", "extra", "expected"),
    [
        (
            "emptyDir: {}",
            "",
            "spec.yaml:9:24: error: $.spec.checkpoint.volume: volume 'ckpt' is an emptyDir: it "
            "is deleted with its pod, so a job that starts again finds no checkpoint (name a "
            "volume that outlives the pods (nfs, efs, cephfs, claim, dynamic)) "
            "[checkpoint-volume]",
        ),
        (
            NFS,
            ", readOnly: true",
            "spec.yaml:9:24: error: $.spec.checkpoint.volume: volume 'ckpt' is mounted "
            "readOnly: the ranks cannot save checkpoints on it (drop readOnly from volume "
            "'ckpt') [checkpoint-volume]",
        ),
        (
            "configMap: {name: c}",
            "",
            "spec.yaml:9:24: error: $.spec.checkpoint.volume: volume 'ckpt' is a configMap: "
            "read-only files of one object (at most 1 MiB), not a volume the ranks save "
            "checkpoints on (name a volume that holds data (nfs, efs, cephfs, claim, dynamic, "
            "hostPath)) [volume-reference]",
        ),
    ],
)
def test_a_checkpoint_volume_that_cannot_keep_checkpoints_is_refused(source, extra, expected):
    body = SPEC + volume(source, extra) + "  checkpoint: {volume: ckpt}\n"
    assert expected in findings(body)


def test_a_checkpoint_volume_that_is_not_there_is_named():
    body = SPEC + volume(NFS) + "  checkpoint: {volume: cpt}\n"
    assert findings(body) == [
        "spec.yaml:9:24: error: $.spec.checkpoint.volume: no volume named 'cpt' in "
        "spec.volumes (defined: ckpt) [volume-reference]"
    ]


def test_a_host_path_shared_by_ranks_on_several_nodes_is_a_warning():
    body = (
        SPEC.replace("job\n", "collective-job\n  args: [t.py]\n")
        + "  worker: {replicas: 2}\n"
        + volume("hostPath: {path: /ckpt}")
        + "  checkpoint: {volume: ckpt}\n"
    )
    (found,) = [f for f in findings(body) if "[checkpoint-volume]" in f]
    assert ": warning: $.spec.checkpoint.volume: volume 'ckpt' is a hostPath" in found


def test_restarts_on_a_workload_that_cannot_restart_its_group_are_refused():
    (found,) = findings(SPEC + "  run: {restarts: 3}\n")
    assert found.startswith(
        "spec.yaml:8:9: error: $.spec.run.restarts: workload 'job' cannot restart its group "
        "of ranks: the Job would not start them again ("
    )
    assert found.endswith(") [group-restarts]")
    assert findings(SPEC + "  run: {restarts: 0}\n") == []


@pytest.mark.parametrize("path", ['"x\\n/../../etc"', '"a\\n/../b"', '"x\\r\\n/.."'])
def test_a_checkpoint_path_stays_inside_its_volume(path):
    # the schema's pattern stops at a line break; normalised, these leave the volume
    found = findings(SPEC + volume(NFS) + f"  checkpoint: {{volume: ckpt, path: {path}}}\n")
    assert any(
        f.startswith("spec.yaml:9:36: error: $.spec.checkpoint.path: checkpoint.path ")
        and "steps out of volume 'ckpt' with '..'" in f
        and f.endswith("[checkpoint-volume]")
        for f in found
    ), found


def test_a_two_dot_step_without_a_line_break_is_the_schemas_to_refuse():
    found = findings(SPEC + volume(NFS) + "  checkpoint: {volume: ckpt, path: a/../../b}\n")
    assert [f for f in found if "[schema]" in f] and "[checkpoint-volume]" not in str(found)


@pytest.mark.parametrize(
    ("entry", "replaced"),
    [
        ("PADDLE_CHECKPOINT_DIR", "the '/ckpt/a/b' spec.checkpoint writes"),
        ("PADDLE_RESTART_ATTEMPT", "the group's attempt spec.checkpoint writes"),
    ],
)
def test_an_env_entry_over_a_checkpoint_variable_is_a_warning(entry, replaced):
    body = (
        SPEC
        + volume(NFS)
        + "  checkpoint: {volume: ckpt, path: a/b}\n"
        + f"  worker: {{env: [{{name: {entry}, value: /tmp}}]}}\n"
    )
    assert findings(body) == [
        f"spec.yaml:10:25: warning: $.spec.worker.env[0].name: env '{entry}' replaces "
        f"{replaced}: env wins (keep one of them) [env-override]"
    ]
