"""``record`` (paddlegen/spec/record.py): frozen for mypy, which checks the package strictly;
at run time a plain dataclass that compares by identity and prints as an object."""

from __future__ import annotations

import dataclasses
import os

import pytest

from paddlegen.spec.model import Volume
from paddlegen.workloads.base import Container

ASSIGNS = """\
from paddlegen.spec.model import Volume


def rename(volume: Volume) -> None:
    volume.name = "other"
"""


@pytest.mark.slow
def test_mypy_refuses_an_assignment_to_a_records_field(tmp_path):
    # mypy comes with the dev extra (and CI's lock), not the test extra: a tool like the others
    if os.environ.get("CI") != "true":
        pytest.importorskip("mypy", reason="mypy is not installed (pip install -e .[dev])")
    from mypy import api

    source = tmp_path / "assigns.py"
    source.write_text(ASSIGNS, encoding="utf-8")
    out, _err, status = api.run(["--strict", "--no-incremental", str(source)])
    assert status == 1
    assert 'Property "name" defined in "Volume" is read-only' in out


def test_a_record_compares_by_identity():
    one = Container(name="paddle", image="img:1")
    same = Container(name="paddle", image="img:1")
    assert dataclasses.is_dataclass(one)
    assert one != same and one == one  # noqa: PLR0124
    assert len({one, same}) == 2
    assert dataclasses.replace(one, image="img:2").image == "img:2"
    assert repr(Volume.__repr__) == repr(object.__repr__)
