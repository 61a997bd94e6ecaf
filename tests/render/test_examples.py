"""One snapshot per example: the whole planned tree, file by file. Review every diff."""

from __future__ import annotations

import pytest

from paddlegen.pipeline import build
from tests.conftest import ROOT, example_specs

EXAMPLES = example_specs()


def tree_text(rendered: build.Rendered) -> str:
    return "".join(f"# ---- {path} ----\n{text}" for path, text in rendered.plan.items())


def example_id(spec) -> str:
    # The id names the snapshot file: a spec in a subfolder (examples/gitops/jobs/) gets `__`
    # for `/`, which syrupy cannot put in a file name.
    return spec.relative_to(ROOT / "examples").as_posix().replace("/", "__")


@pytest.mark.parametrize("spec", EXAMPLES, ids=example_id)
def test_example_renders_to_its_snapshot(spec, yaml_snapshot):
    (rendered,) = build.render_specs([spec])
    assert tree_text(rendered) == yaml_snapshot


def test_there_are_examples():
    assert len(EXAMPLES) >= 10
