"""benchmarks/node.py, the node jobs' times against issue 24's budget, and what the node tests
record for it (trained_in)."""

from __future__ import annotations

import json
import sys

from tests.cluster.test_node_operators import trained_in
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import node  # noqa: E402  (benchmarks/ is no package)


def test_a_node_test_records_its_job_time_with_its_id_when_asked(tmp_path, monkeypatch, capsys):
    record = tmp_path / "times.jsonl"
    trained_in(12.345)  # not asked: printed only
    assert not record.exists()
    monkeypatch.setenv("PADDLEGEN_NODE_TIMES", str(record))
    trained_in(12.345, "2 ranks trained")
    trained_in(3.0, "failed")
    assert capsys.readouterr().out.splitlines() == [
        "trained in 12.3 s",
        "2 ranks trained in 12.3 s",
        "failed in 3.0 s",
    ]
    test = "tests/unit/test_benchmark_node.py::" + sys._getframe().f_code.co_name
    assert [json.loads(line) for line in record.read_text().splitlines()] == [
        {"test": test, "what": "2 ranks trained", "seconds": 12.35},
        {"test": test, "what": "failed", "seconds": 3.0},
    ]


def test_the_table_gives_each_job_its_median_spread_and_ratio_and_names_the_slow_ones():
    rows = node.table({"t::a (trained)": [20.0, 40.0, 30.0], "t::b (failed)": [70.0, 61.0]}, 60)
    assert [row.split() for row in rows[1:3]] == [
        ["t::a", "(trained)", "3", "30.0", "20.0", "40.0", "0.50"],
        ["t::b", "(failed)", "2", "65.5", "61.0", "70.0", "1.09"],
    ]
    assert rows[3] == "over the 60-s budget (median): t::b (failed)"
