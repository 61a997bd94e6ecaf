"""Shared fixtures: the CLI runner, the example specs, a YAML snapshot extension, tool lookup."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, settings
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"

# Hypothesis profiles, registered here because pytest reads this file before it applies
# --hypothesis-profile. `ci` (default): fast and reproducible. `long`: the issue-6 soak run,
# >= 10,000 examples per property (`--hypothesis-profile=long` or the environment variable).
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[p for p in Phase if p is not Phase.explain],
)  # explain: minutes
settings.register_profile(
    "long",
    max_examples=10_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("PADDLEGEN_HYPOTHESIS_PROFILE", "ci"))


# What the fast loop (`python3 -m pytest -m "not slow"`) leaves out: property tests, the
# end-to-end tests that run real tools, and the fault tests that kill real processes. They
# take about three quarters of the full run; the README's test command runs everything.
SLOW = (
    "property/",
    "e2e/",
    "security/test_faults.py",
    "security/test_interrupts.py",
    "security/test_pool.py",
)


# Tests against a local control plane (hack/local-cluster, started once per worker): those
# on the real node, and the rest on KWOK's fake nodes, two units on two control planes, the
# node's in modules named so (tests/cluster/conftest.py refuses a `node` test elsewhere). A
# third unit for the Argo CD tests, on a control plane of its own, cost 5 more minutes of CPU
# for no shorter run on 2 cores (2026-11-28: 20 min 47 s, 33 CPU-min).
CLUSTER = "cluster/"
NODE_MODULES = "cluster/test_node"
CLUSTER_UNITS = (NODE_MODULES, CLUSTER)  # the longest first


def cluster_unit(module: str) -> str | None:
    """The cluster unit of the test module ``module`` (a path from tests/), if any: the most
    specific prefix wins (CLUSTER is also the start of NODE_MODULES)."""
    found = [unit for unit in CLUSTER_UNITS if module.startswith(unit)]
    return max(found, key=len, default=None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        where = item.path.relative_to(tests).as_posix()
        if where.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
        if where.startswith(CLUSTER):
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml): a worker per CPU, and one more, as the workers of the two
    cluster units mostly wait on their controllers (PYTEST_XDIST_AUTO_NUM_WORKERS overrides)."""
    return (os.cpu_count() or 1) + 1


# How much a worker yields the CPU once it runs the modules that are no cluster unit's: the
# cluster units' jobs (the node's training ranks, KWOK's controllers) wait on each other on 2
# cores, the other modules only fill the time they leave. 5: a quarter of a core's share each
# when both are busy (the kernel's weights, kernel/sched/core.c sched_prio_to_weight).
OTHER_MODULES_NICE = 5


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """On an xdist worker, the first test of no cluster unit lowers the worker's priority for
    the rest of the run; the control planes a cluster unit started keep theirs."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and item.get_closest_marker("cluster") is None and not _niced:
        os.nice(OTHER_MODULES_NICE)
        _niced.append(worker)


_niced: list[str] = []  # this worker's name, once it lowered its priority


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scheduler for this suite: every test module is a unit of work, except
    the `cluster` tests, which are two: those on the real node (test_node_*.py) and the rest
    on KWOK's fake nodes, each on a control plane its first test starts and the rest of its
    unit shares. They are handed out first, the longer first, so that two workers run them
    side by side while the others run the CPU-bound modules."""
    from xdist.scheduler import LoadScopeScheduling

    class ClusterTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return cluster_unit(module.removeprefix("tests/")) or module

        def _assign_work_unit(self, node: object) -> None:
            for unit in reversed(CLUSTER_UNITS):  # each to the front: the longest ends first
                if unit in self.workqueue:
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return ClusterTestsTogether(config, log)


def example_specs() -> list[Path]:
    """Every spec under examples/ (files that declare apiVersion paddlegen/v1)."""
    return sorted(
        p
        for p in EXAMPLES.rglob("*.yaml")
        if "apiVersion: paddlegen/v1" in p.read_text(encoding="utf-8")
    )


class YAMLSnapshot(SingleFileSnapshotExtension):
    """One golden file per snapshot, stored as readable YAML text."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


@pytest.fixture
def yaml_snapshot(snapshot):
    return snapshot.use_extension(YAMLSnapshot)


class TextSnapshot(SingleFileSnapshotExtension):
    """One golden text file per snapshot: what a command printed, as it printed it."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshot)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def require_tool(name: str) -> str:
    """The tool's path; skip when absent on a developer machine, fail when CI=true."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is required in CI but is not on PATH")
    pytest.skip(f"{name} is not installed")
    raise AssertionError("unreachable")
