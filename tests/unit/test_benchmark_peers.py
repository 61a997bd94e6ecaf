"""The benchmark's floor peer renders paddlegen's own templates: it must keep up with them."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402  (benchmarks/ is no package)


def test_the_floor_peer_renders_a_synthetic_repository(tmp_path):
    synth.write_repo(tmp_path / "repo", 8, 7)  # every workload, several volume sources
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "peers" / "floor.py"),
            str(tmp_path / "repo"),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert len([p for p in (tmp_path / "out").rglob("*.yaml")]) >= 8


def test_the_benchmark_prints_its_help():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "--wait-idle SECONDS" in done.stdout and "% of the CPUs" in done.stdout
