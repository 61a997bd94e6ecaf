#!/usr/bin/env python3
"""How long each training job of the `node` tests takes on the real node, against a
budget of 60 s a job: the node tests run --runs times (each run starts its own node and stops
it), every job's time is recorded by the tests themselves (trained_in in
tests/cluster/test_node_operators.py: from its apply to its final state), and each job's
median, minimum and maximum are printed with the median's ratio to the budget.

    python benchmarks/node.py [--runs 3] [--budget 60] [--json FILE] [-- PYTEST-ARGS]

Needs what the node tests need (`hack/local-cluster build --with node,...`, root); runs
nothing else beside them, so that the times are the jobs' own, not a loaded machine's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(record: Path, extra: list[str]) -> None:
    """One run of every node test, one process (-n 0), in file order."""
    env = {**os.environ, "PADDLEGEN_NODE_TIMES": str(record), "CI": "true"}
    command = [sys.executable, "-m", "pytest", "tests/cluster", "-m", "node", "-n", "0",
               "-p", "no:randomly", "-q", "--no-header", *extra]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"the node tests failed (exit {done.returncode}): no times to report")


def table(times: dict[str, list[float]], budget: float) -> list[str]:
    width = max(map(len, times), default=3)
    rows = [f"{'job':<{width}} {'runs':>4} {'median':>7} {'min':>6} {'max':>6} {'/budget':>7}"]
    for job, seconds in sorted(times.items()):
        median = statistics.median(seconds)
        rows.append(
            f"{job:<{width}} {len(seconds):>4} {median:>7.1f} {min(seconds):>6.1f} "
            f"{max(seconds):>6.1f} {median / budget:>7.2f}"
        )
    over = [job for job, seconds in times.items() if statistics.median(seconds) > budget]
    rows.append(f"over the {budget:.0f}-s budget (median): {', '.join(sorted(over)) or 'none'}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds a job")
    parser.add_argument("--json", type=Path, help="write every recorded time here")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paddlegen-node-bench-") as folder:
        record = Path(folder) / "times.jsonl"
        for _ in range(args.runs):
            run_once(record, args.pytest_args)
        recorded = [json.loads(line) for line in record.read_text().splitlines()]
    times: dict[str, list[float]] = {}
    for entry in recorded:
        test = entry["test"].removeprefix("tests/cluster/")
        times.setdefault(f"{test} ({entry['what']})", []).append(entry["seconds"])
    print("\n".join(table(times, args.budget)))
    if args.json:
        args.json.write_text(json.dumps(recorded, indent=1) + "\n")


if __name__ == "__main__":
    main()
