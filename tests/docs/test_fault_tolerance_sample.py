"""The checkpoint code of docs/fault-tolerance.md is the code the node tests run
(tests/cluster/training/checkpointed.py, between its `checkpoint` marks): what the page shows
is what resumed with the weights of an unfaulted run on a real node."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.docs.pages import DOCS, blocks

PROGRAM = ROOT / "tests" / "cluster" / "training" / "checkpointed.py"


def checkpoint_region() -> str:
    """The program's code between its marks, as a reader's program would have it: without
    the test's own print, its training step standing for the reader's."""
    text = PROGRAM.read_text(encoding="utf-8")
    region = text.split("# checkpoint: begin\n", 1)[1].split("# checkpoint: end\n", 1)[0]
    lines = [line for line in region.splitlines(keepends=True) if not line.startswith("print(")]
    return "".join(lines).replace("train_one_step(step)", "...  # one training step")


def test_the_page_shows_the_code_the_node_tests_run():
    page = DOCS / "fault-tolerance.md"
    (sample,) = [b for b in blocks({"py"}) if b.page == page]
    assert sample.body == checkpoint_region()
