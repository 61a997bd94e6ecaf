"""benchmarks/compare.py, the A/B benchmark of two installations, and the synthetic repositories
it gives both: a source kind left out, the rest as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402  (benchmarks/ is no package)


def test_leaving_a_source_out_keeps_every_other_spec_as_it_was():
    assert [synth.make_spec(i, 7, synth.SOURCES) for i in range(40)] == [
        synth.make_spec(i, 7) for i in range(40)
    ]
    kept = synth.leaving_out(["efs"])
    assert kept == ("nfs", "cephfs", "hostPath", "dynamic", "claim", "emptyDir")
    volumes = [v for i in range(60) for v in synth.make_spec(i, 7, kept)["spec"]["volumes"]]
    assert not [v for v in volumes if "efs" in v]
    assert {s for s in kept for v in volumes if s in v} == set(kept)  # the others all appear


def test_an_unknown_or_every_source_left_out_is_refused():
    with pytest.raises(ValueError, match="unknown volume source"):
        synth.leaving_out(["nfs", "gcs"])
    with pytest.raises(ValueError, match="every volume source"):
        synth.leaving_out(list(synth.SOURCES))


def test_compare_measures_pairs_and_prints_the_ratio_table(tmp_path):
    paddlegen = Path(sys.executable).parent / "paddlegen"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "compare.py"),
            "--base",
            str(paddlegen),
            "--head",
            str(paddlegen),
            "--pairs",
            "2",
            "--sizes",
            "3",
            "--rows",
            "render-1-spec,check-*",
            "--leave-out",
            "efs",
            "--work",
            str(tmp_path / "work"),
            "--json",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| row | N | CPU base | CPU head | ratio |")
    assert [line.split(" | ")[0] for line in table[2:]] == [
        "| render 1 spec (empty dir)",
        "| check 3 unchanged specs",  # its output rendered untimed: render-3 was not asked for
    ]
    rows = json.loads((tmp_path / "out.json").read_text())["rows"]
    assert [len(r["pairs"]) for r in rows] == [2, 2]
    assert [p["head_first"] for p in rows[0]["pairs"]] == [False, True]  # base-head, head-base
    assert not (tmp_path / "work" / "trash").exists()  # the moved-aside outputs are deleted
