"""Spec values, keys and file names cannot inject terminal escapes or forge lines in diagnostics."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from paddlegen import report
from paddlegen.cli import cli
from paddlegen.errors import Diagnostic

# What no report may print raw, spelled out independently of report._UNPRINTABLE.
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
HOSTILE = "\x1b[31mred\x1b]0;pwned\x07\r\x0b\x0c\x00\x7f\x85\x9b2J\u2028\u2029\u202e\u2066"

# Semantic findings quote these values as they are (image-tag, volume-unique).
VALUES_SPEC = r"""apiVersion: paddlegen/v1
kind: TrainingJob
metadata: {name: demo}
spec:
  workload: job
  image: "镜像-café\e[2J\a\r\N\L\P\u202e\u2066%0A::error::forged/x"
  resources: {limits: {memory: 1Gi}}
  volumes:
    - {name: data, mountPath: "/data\e]0;pwned\a\x85::error file=x::forged", emptyDir: {}}
    - {name: more, mountPath: "/data\e]0;pwned\a\x85::error file=x::forged/", emptyDir: {}}
"""
# Schema findings put a key into the (unquoted) field path.
KEYS_SPEC = r"""apiVersion: paddlegen/v1
kind: TrainingJob
metadata:
  name: demo
  labels: {"team\e]0;pwned\a\r\n::error::forged\x9b\u202e": x}
spec: {workload: job, image: "x:1", resources: {limits: {memory: 1Gi}}}
"""


@pytest.fixture
def hostile_dir(tmp_path):
    folder = tmp_path / "jobs\x1b[7m\u202e"  # a hostile folder name reaches the file field
    folder.mkdir()
    return folder


def _assert_no_raw_controls(result) -> None:
    for stream in (result.stdout, result.stderr):
        assert not RAW.findall(stream), RAW.findall(stream)


@pytest.mark.parametrize("command", ["validate", "render"])
@pytest.mark.parametrize("fmt", ["text", "github"])
@pytest.mark.parametrize("spec", ["values", "keys"])
def test_no_raw_control_character_reaches_the_terminal(
    runner, hostile_dir, tmp_path, command, fmt, spec
):
    path = hostile_dir / f"{spec}\x1b[2K\r.yaml"
    path.write_text(VALUES_SPEC if spec == "values" else KEYS_SPEC, encoding="utf-8")
    args = [command, "--format", fmt, str(path)]
    if command == "render":
        args += ["-o", str(tmp_path / "deploy")]
    # color=True: click strips CSI sequences (not OSC, CR or BEL) from output to a non-terminal
    result = runner.invoke(cli, args, color=True)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    _assert_no_raw_controls(result)
    lines = result.stderr.splitlines()
    assert "\\x1b]0;pwned\\x07" in result.stderr  # shown, escaped
    assert "jobs\\x1b[7m\\u202e" in result.stderr  # the file name too
    if spec == "values":
        assert "镜像-café" in result.stderr  # ordinary non-ASCII stays readable
    if fmt == "github":
        # One workflow command per finding: nothing a value holds starts another line.
        assert lines and all(line.startswith(("::error ", "::warning ")) for line in lines[:-1])
        last = "::notice title=paddlegen summary::nothing written: 1 of 1 spec has errors"
        assert lines[-1].startswith(("::error ", "::warning ")) or lines[-1] == last
        if spec == "values":
            assert "%250A::error::forged" in result.stderr  # '%' escaped: no decoded newline
    else:
        shown = str(path).replace("\x1b", "\\x1b").replace("\r", "\\r")
        shown = shown.replace("\u202e", "\\u202e")
        summary = re.compile(rf"\d+ errors? in {re.escape(shown)}")
        if command == "render":  # the run's last line: what it left undone
            assert lines.pop() == "paddlegen: nothing written: 1 of 1 spec has errors"
        assert all(line.startswith(shown + ":") or summary.fullmatch(line) for line in lines), lines
        assert not any(line.startswith("::") for line in lines)


def test_json_keeps_the_exact_values_and_prints_no_raw_control(runner, hostile_dir):
    path = hostile_dir / "values.yaml"
    path.write_text(VALUES_SPEC, encoding="utf-8")
    result = runner.invoke(cli, ["validate", "--format", "json", str(path)], color=True)
    assert result.exit_code == 1, result.output
    _assert_no_raw_controls(result)
    assert result.stdout.isascii()
    found = json.loads(result.stdout)
    assert {f["file"] for f in found} == {str(path)}
    assert any(
        "镜像-café\x1b[2J\x07\r\x85\u2028\u2029\u202e\u2066%0A" in f["message"] for f in found
    )


def test_every_reporter_escapes_every_field():
    d = Diagnostic(
        file=f"a{HOSTILE}.yaml",
        line=3,
        col=4,
        path=f"$.x{HOSTILE}",
        message=f"m{HOSTILE}",
        rule="r",
        hint=f"h{HOSTILE}",
        origin=f"o{HOSTILE}",
    )
    for name, reporter in report.REPORTERS.items():
        out = reporter([d, Diagnostic(file=f"b{HOSTILE}", severity="warning", message="w")])
        assert not RAW.findall(out.replace("\n", "")), (name, RAW.findall(out))
        lines = out.splitlines()
        if name == "text":
            assert len(lines) == 3  # two findings and the summary, no forged line
            assert lines[0].startswith(
                "a\\x1b[31mred\\x1b]0;pwned\\x07\\r\\x0b\\x0c\\x00\\x7f"
                "\\x85\\x9b2J\\u2028\\u2029\\u202e\\u2066.yaml:3:4: error: "
            )
        elif name == "github":
            assert len(lines) == 2 and all(line.startswith("::") for line in lines)
        elif name == "json":
            assert json.loads(out)[0]["origin"] == f"o{HOSTILE}"
        elif name == "sarif":  # shown to people by code scanning: escaped as for a terminal
            result = json.loads(out)["runs"][0]["results"][0]
            assert result["message"]["text"].startswith("$.x\\x1b[31mred\\x1b]0;pwned")
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert uri.isascii() and "%1B%5B31mred%1B%5D0%3Bpwned%07%0D" in uri
        else:
            cases = ET.fromstring(out).iter("testcase")  # a finding counts for its origin
            assert [case.get("name")[:8] for case in cases] == ["b\\x1b[31", "o\\x1b[31"]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31m", "\\x1b[31m"),
        ("a\rb\nc\td", "a\\rb\\nc\\td"),
        ("\x00\x07\x7f\x85\x9b", "\\x00\\x07\\x7f\\x85\\x9b"),
        ("\u2028\u2029", "\\u2028\\u2029"),
        ("\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"),
        (
            "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
            "\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c",
        ),
        ("\udcff", "\\udcff"),  # an undecodable byte in a file name (surrogateescape)
        ("训练任务 café naïve Ωμέγα 🚀 \\x1b", "训练任务 café naïve Ωμέγα 🚀 \\x1b"),
    ],
)
def test_printable(raw, shown):
    assert report.printable(raw) == shown


def test_cli_messages_outside_diagnostics_are_escaped_too(runner, tmp_path):
    """Errors, kept files, drift lists and diffs name paths and show file content."""
    from tests.builders import job_spec

    missing = tmp_path / "no\x1b]0;pwned\x07.yaml"
    result = runner.invoke(cli, ["render", str(missing), "-o", str(tmp_path / "d")], color=True)
    assert result.exit_code == 2 and "\\x1b]0;pwned\\x07" in result.stderr
    spec = tmp_path / "a.yaml"
    spec.write_text(job_spec("a"))
    out = tmp_path / "deploy"
    assert runner.invoke(cli, ["render", str(spec), "-o", str(out)]).exit_code == 0
    (out / "a" / "notes\x1b[2J.txt").write_text("x")
    manifest = out / "a" / "batch_v1_job_a.yaml"
    manifest.write_text(manifest.read_text() + "# \x1b[2J\x07\r\n")
    kept = runner.invoke(cli, ["check", str(spec), "-o", str(out)], color=True)
    assert kept.exit_code == 1
    assert "-# \\x1b[2J\\x07\n" in kept.stdout  # the diff line, escaped, its break kept
    rendered = runner.invoke(cli, ["render", str(spec), "-o", str(out)], color=True)
    assert "notes\\x1b[2J.txt" in rendered.stderr
    for text in (result.stderr, kept.stdout, kept.stderr, rendered.stderr):
        assert not RAW.search(text), repr(text)
