"""Training programs the `node` tests run in real pods: each rank prints its losses and what
it learned (`rank R/W step S loss L`, `rank R/W parameters V,V,...`), so that a test sees the
loss fall and every rank agree."""

from __future__ import annotations

import re
from pathlib import Path

LOSS = re.compile(r"^rank (\d+)/(\d+) step (\d+) loss (\S+)$", re.M)
PARAMETERS = re.compile(r"^rank (\d+)/(\d+) parameters (\S+)$", re.M)


def program(name: str) -> str:
    """The text of the program ``name`` (a module of this folder), as a pod receives it."""
    return (Path(__file__).parent / f"{name}.py").read_text(encoding="utf-8")


def assert_trained(logs: dict[str, str], world: int, tolerance: float = 0.0) -> None:
    """In ``logs`` (pod or file -> text) every rank of ``world`` printed losses that fell a
    hundredfold and parameters that agree: equal, or within ``tolerance`` of each other
    (parameter servers in GEO mode: each worker keeps its own last steps)."""
    text = "\n".join(f"--- {where}\n{log}" for where, log in sorted(logs.items()))
    losses: dict[int, list[float]] = {}
    for rank, size, _, loss in LOSS.findall(text):
        assert int(size) == world, text
        losses.setdefault(int(rank), []).append(float(loss))
    assert sorted(losses) == list(range(world)), text
    for rank, values in losses.items():
        assert values[-1] < values[0] / 100, f"rank {rank} did not learn: {values}"
    learned = {int(rank): [float(v) for v in values.split(",")]
               for rank, _, values in PARAMETERS.findall(text)}  # fmt: skip
    assert sorted(learned) == list(range(world)), text
    for values in learned.values():
        gaps = [abs(a - b) for a, b in zip(values, learned[0], strict=True)]
        assert max(gaps) <= tolerance, f"the ranks disagree: {learned}"
