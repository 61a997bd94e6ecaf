"""Checks of spec.checkpoint and spec.run.restarts: message, position and rule."""

from __future__ import annotations

import pytest

from tests.builders import findings, only, rules

SPEC = "spec:\n  workload: job\n  image: img:1\n  resources: {limits: {memory: 1Gi}}\n"


def volume(source: str, extra: str = "") -> str:
    return f"  volumes: [{{name: ckpt, mountPath: /ckpt, {source}{extra}}}]\n"


NFS = "capacity: 1Gi, accessModes: [ReadWriteMany], nfs: {server: s, path: /x}"
# The user that owns the checkpoint directories (rule root-volume-owner, below)
OWNER = "  security: {runAsUser: 1000}\n"


def test_a_checkpoint_on_a_shared_volume_has_no_findings():
    assert findings(SPEC + OWNER + volume(NFS) + "  checkpoint: {volume: ckpt, path: a/b}\n") == []


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
    (found,) = only(body, "checkpoint-volume")
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
    body = SPEC + volume(NFS) + f"  checkpoint: {{volume: ckpt, path: {path}}}\n"
    (found,) = only(body, "checkpoint-volume")
    assert found.startswith("spec.yaml:9:36: error: $.spec.checkpoint.path: checkpoint.path ")
    assert "steps out of volume 'ckpt' with '..'" in found


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
        + OWNER
        + volume(NFS)
        + "  checkpoint: {volume: ckpt, path: a/b}\n"
        + f"  worker: {{env: [{{name: {entry}, value: /tmp}}]}}\n"
    )
    assert findings(body) == [
        f"spec.yaml:11:25: warning: $.spec.worker.env[0].name: env '{entry}' replaces "
        f"{replaced}: env wins (keep one of them) [env-override]"
    ]


ROOT_VOLUME_OWNER = (
    "spec.yaml:9:24: warning: $.spec.checkpoint.volume: the training container runs as root "
    "with every capability dropped (security.restricted) and saves its checkpoints on volume "
    "'ckpt' (nfs): without DAC_OVERRIDE root cannot write a directory another user owns unless "
    "its mode lets everyone write, as is common on shared storage (run as the user that owns "
    "the volume's directories with security.runAsUser and runAsGroup, which works under NFS "
    "root squashing too; or add DAC_OVERRIDE to security.capabilities.add, which Pod Security "
    "baseline allows) [root-volume-owner]"
)


def test_root_without_dac_override_is_warned_of_checkpoints_on_shared_storage():
    """Paddle images run as root: the spec's default is root with drop [ALL]."""
    checkpoint = "  checkpoint: {volume: ckpt}\n"
    assert findings(SPEC + volume(NFS) + checkpoint) == [ROOT_VOLUME_OWNER]
    root = SPEC.replace("  image", "  security: {runAsUser: 0}\n  image")
    assert findings(root + volume(NFS) + checkpoint) == [ROOT_VOLUME_OWNER.replace(":9:", ":10:")]


@pytest.mark.parametrize(
    ("security", "source"),
    [
        ("{runAsUser: 1000}", NFS),
        ("{runAsNonRoot: true}", NFS),
        ("{capabilities: {add: [DAC_OVERRIDE]}}", NFS),
        ("{restricted: false}", NFS),
        # storage the job makes
        ("{}", "dynamic: {capacity: 1Gi, accessModes: [ReadWriteMany]}"),
        ("{}", "emptyDir: {}"),
    ],
)
def test_a_checkpoint_written_by_its_owner_with_dac_override_or_on_its_own_storage_is_not(
    security, source
):
    body = SPEC + f"  security: {security}\n" + volume(source) + "  checkpoint: {volume: ckpt}\n"
    assert "root-volume-owner" not in rules(body)


def test_a_written_volume_that_holds_no_checkpoint_is_not():
    assert findings(SPEC + volume(NFS)) == []
