"""Mount paths are compared as directories: '/data', '/data/' and '/data/./' are one mount."""

from __future__ import annotations

import pytest

from tests.builders import findings
from tests.unit.test_checks_distributed import distributed

JOB = "spec:\n  workload: job\n  image: img:1\n"


def _two_volumes(first: str, second: str) -> str:
    return (
        JOB + f"  volumes:\n    - {{name: a, mountPath: '{first}', emptyDir: {{}}}}\n"
        f"    - {{name: b, mountPath: '{second}', emptyDir: {{}}}}\n"
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("/data", "/data"),
        ("/data", "/data/"),
        ("/data/", "/data"),
        ("/data//x", "/data/x"),
        ("/data/./x", "/data/x"),
        ("/data/x/..", "/data"),
        ("//data", "/data"),
        ("///data", "/data"),
    ],
)
def test_equal_directories_are_duplicate_mount_paths(first, second):
    same = "" if first == second else f" (as '{first}')"
    assert findings(_two_volumes(first, second)) == [
        f"spec.yaml:9:28: error: $.spec.volumes[1].mountPath: volume mountPath '{second}' is "
        f"already used by spec.volumes[0]{same} [volume-unique]"
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("/data", "/data/x"),  # nested mounts are allowed
        ("/data", "/Data"),
        ("/data", "/data-2"),
        ("/", "/data"),
    ],
)
def test_different_directories_are_not_duplicates(first, second):
    assert findings(_two_volumes(first, second)) == []


@pytest.mark.parametrize(
    "out_dir", ["/data/demo", "/data/demo/", "/data//demo", "/data/./demo", "/data/x/../demo"]
)
@pytest.mark.parametrize("mount", ["/data", "/data/", "/data/."])
def test_an_out_dir_naming_the_job_folder_does_not_warn(mount, out_dir):
    body = distributed(f"  dataPrep: {{volume: data, outDir: '{out_dir}'}}\n").replace(
        "mountPath: /data", f"mountPath: '{mount}'"
    )
    assert findings(body) == []


def test_an_out_dir_elsewhere_still_warns_with_the_normalised_path():
    body = distributed("  dataPrep: {volume: data, outDir: /data/demo/x}\n").replace(
        "mountPath: /data", "mountPath: '/data/./'"
    )
    (line,) = findings(body)
    assert "the trainers read /data/demo (JOB_PATH/JOB_NAME), not this outDir" in line


def test_a_root_mount_reads_the_job_folder_under_root():
    body = distributed("  dataPrep: {volume: data, outDir: /demo}\n").replace(
        "mountPath: /data", "mountPath: /"
    )
    assert findings(body) == []
