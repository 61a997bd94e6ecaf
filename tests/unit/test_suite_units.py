"""tests/conftest.py's cluster units: which control plane each cluster test module runs on."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CLUSTER, CLUSTER_UNITS, NODE_MODULES, cluster_unit

TESTS = Path(__file__).resolve().parents[1]


def test_a_module_goes_to_the_unit_of_its_most_specific_prefix():
    assert cluster_unit("cluster/test_argocd_kueue.py") == CLUSTER
    assert cluster_unit("cluster/test_node_kueue.py") == NODE_MODULES
    assert cluster_unit("cluster/test_kueue.py") == CLUSTER
    assert cluster_unit("unit/test_suite_units.py") is None


def test_every_unit_has_modules_of_its_own():
    modules = [p.relative_to(TESTS).as_posix() for p in (TESTS / "cluster").glob("test_*.py")]
    units = {cluster_unit(module) for module in modules}
    assert units == set(CLUSTER_UNITS)
