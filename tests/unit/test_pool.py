"""output/pool.py: what forked workers inherit from the parent."""

from __future__ import annotations

import gc
import multiprocessing

import pytest

from paddlegen.output.pool import map_ordered


def _frozen(_item: int) -> int:
    return gc.get_freeze_count()


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="workers are forked"
)
def test_workers_inherit_the_parents_objects_frozen_and_the_parent_unfreezes_them():
    # Frozen, a worker's collections leave the inherited objects (and their pages) alone.
    assert all(count > 0 for count in map_ordered(_frozen, list(range(16)), jobs=2))
    assert gc.get_freeze_count() == 0
    assert map_ordered(_frozen, [1, 2], jobs=2) == [0, 0]  # in process: nothing to freeze
