"""`paddlegen import`'s input: read within bounds, never hanging, every misshapen document refused
at its line, null fields read as the API server reads them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from paddlegen.cli import cli
from tests.conftest import DATA

JOB = (DATA / "import" / "volcano-job.yaml").read_text(encoding="utf-8")
PV = """\
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  nfs: {server: nfs.example.com, path: /x}
  claimRef: null
"""


def _import(runner, tmp_path: Path, text: str):
    source = tmp_path / "in.yaml"
    source.write_text(text, encoding="utf-8")
    return runner.invoke(cli, ["import", str(source), "--lossy"])


@pytest.mark.parametrize(
    "text",
    [
        JOB.replace(
            "metadata: {name: resnet, namespace: ml}", "metadata:\n  name: resnet\n  labels:"
        ),
        JOB.replace("        resources:\n", "        resources:\n        xresources:\n", 1),
        JOB + PV,
        JOB.replace("        securityContext:\n", "        env:\n        securityContext:\n", 1),
    ],
    ids=["empty-labels", "empty-field", "claimRef-null", "env-null"],
)
def test_a_null_field_is_no_field_as_the_api_server_reads_it(runner, tmp_path, text):
    result = _import(runner, tmp_path, text)
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output


@pytest.mark.parametrize(
    ("text", "where", "said"),
    [
        ("apiVersion: v1\nkind: List\nitems: 5\n", "3:1", "a List's items are a number (5)"),
        ("apiVersion: {}\nkind: Job\nmetadata: {name: a}\n", "1:1", "apiVersion is a mapping"),
        ("apiVersion: v1\nkind: [Job]\nmetadata: {name: a}\n", "2:1", "kind is a list"),
        ("apiVersion: v1\nkind: Job\nmetadata: null\n", "3:1", "metadata is missing or empty"),
        ("apiVersion: v1\nkind: Job\nmetadata: {name: 5}\n", "3:12", "metadata.name is a number"),
        ("apiVersion: v1\nkind: Job\nmetadata: {name: a}\nspec: {x: [null]}\n", "4:12", "null"),
        ("- 1\n- 2\n", "1:1", "a document is a list, not a Kubernetes object"),
    ],
)
def test_a_misshapen_document_is_refused_at_its_line(runner, tmp_path, text, where, said):
    result = _import(runner, tmp_path, text)
    assert result.exit_code == 2, result.output
    assert f"in.yaml:{where}: " in result.output
    assert said in result.output
    assert "internal error" not in result.output


CRD = "apiVersion: batch.paddlepaddle.org/v1\nkind: PaddleJob\nmetadata: {name: a, %s}\nspec: {}\n"


@pytest.mark.parametrize(
    ("meta", "where", "said"),
    [
        ("labels: 5", "3:21", "metadata.labels: 5 (an integer), where the API takes an object"),
        ("labels: {a: 1}", "3:30", "metadata.labels.a: 1 (an integer), where the API takes a str"),
        ("annotations: [a]", "3:21", "metadata.annotations: a list, where the API takes an obj"),
        ("namespace: []", "3:21", "metadata.namespace: a list, where the API takes a string"),
    ],
)
def test_the_metadata_of_a_kind_its_schema_leaves_untyped_is_checked(
    runner, tmp_path, meta, where, said
):
    # a CRD's schema says only `metadata: {type: object}`; the API server reads ObjectMeta
    result = _import(runner, tmp_path, CRD % meta)
    assert result.exit_code == 1, result.output
    assert f"in.yaml:{where}: error: PaddleJob/a {said}" in result.output


def test_an_alias_bomb_is_refused_quickly_at_its_line(runner, tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(8):
        prev, name = chr(97 + i), chr(98 + i)
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    start = time.monotonic()
    result = _import(runner, tmp_path, "\n".join(lines) + "\n")
    assert time.monotonic() - start < 5
    assert result.exit_code == 2
    assert "in.yaml:5:" in result.output and "expands to more than" in result.output


def test_an_input_over_a_mebibyte_is_refused(runner, tmp_path):
    result = _import(runner, tmp_path, "# " + "x" * (1024 * 1024) + "\n")
    assert result.exit_code == 2
    assert "larger than 1048576 bytes" in result.output


def test_stdin_is_read_up_to_the_bound(runner):
    result = runner.invoke(cli, ["import", "-"], input=b"\0" * (2 * 1024 * 1024))
    assert result.exit_code == 2
    assert "<stdin>: larger than 1048576 bytes" in result.output


def test_a_device_is_refused_not_read(runner):
    result = runner.invoke(cli, ["import", "/dev/zero"])
    assert result.exit_code == 2
    assert "/dev/zero: cannot read: a character device, not a regular file" in result.output


def test_a_fifo_is_refused_without_waiting_for_a_writer(runner, tmp_path):
    fifo = tmp_path / "in.yaml"
    os.mkfifo(fifo)
    result = runner.invoke(cli, ["import", str(fifo)])
    assert result.exit_code == 2
    assert f"{fifo}: cannot read: a FIFO, not a regular file" in result.output


def test_text_that_is_no_utf8_is_refused_at_its_byte(runner, tmp_path):
    source = tmp_path / "in.yaml"
    source.write_bytes(b"apiVersion: v1\nkind: \xff\n")
    result = runner.invoke(cli, ["import", str(source)])
    assert result.exit_code == 2
    assert "in.yaml:2:7: not UTF-8 text (byte 0xff)" in result.output
