"""The WORKLOADS registry: one folder per workload, each owning all paddlegen knows of it.

``paddlegen/workloads/<package>/`` holds a workload's ``Workload`` entry (see ``base``) and
everything else paddlegen knows of it; ``templates/<name>/`` its templates. Adding a workload
touches its folder, its template folder, its loader and line below (and ``SETTINGS_OWNERS`` if
it has settings), its tests and its docs page, then ``python -m scripts.generate`` writes it
into the schema and the docs. The rest of the package asks the registry, never a workload's
name: the Argo CD health checks and ignoreDifferences come from the kinds of object the
workloads list (``objects``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from paddlegen.workloads.base import Workload
from paddlegen.workloads.objects import ANY_WORKLOAD, TrainingObject, each_kind_once


# Each workload's entry, imported from its folder when first asked for: a render needs its
# spec's workload alone, and importing all six costs a cold render a sixth of its time.
def _job() -> Workload:
    from paddlegen.workloads.job import WORKLOAD

    return WORKLOAD


def _distributed_job() -> Workload:
    from paddlegen.workloads.distributed_job import WORKLOAD

    return WORKLOAD


def _paddlejob() -> Workload:
    from paddlegen.workloads.paddlejob import WORKLOAD

    return WORKLOAD


def _kubeflow_paddlejob() -> Workload:
    from paddlegen.workloads.kubeflow_paddlejob import WORKLOAD

    return WORKLOAD


def _collective_job() -> Workload:
    from paddlegen.workloads.collective_job import WORKLOAD

    return WORKLOAD


def _trainjob() -> Workload:
    from paddlegen.workloads.trainjob import WORKLOAD

    return WORKLOAD


class Registry(Mapping[str, Workload]):
    """The workloads by name, in the registry's order: their names cost nothing (``--workload``'s
    choices, the schema's enum), an entry is loaded when it is asked for, and iterating over the
    entries loads them one by one."""

    def __init__(self, loaders: dict[str, Callable[[], Workload]]) -> None:
        self._loaders = loaders
        self._entries: dict[str, Workload] = {}

    def __getitem__(self, name: str) -> Workload:
        entry = self._entries.get(name)
        if entry is None:
            entry = self._entries[name] = self._loaders[name]()
        return entry

    def __setitem__(self, name: str, entry: Workload) -> None:
        """Replaces a known workload's entry (tests give one other facts)."""
        if name not in self._loaders:
            raise KeyError(name)
        self._entries[name] = entry

    def __contains__(self, name: object) -> bool:
        return name in self._loaders

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


WORKLOADS = Registry(
    {
        "job": _job,
        "distributed-job": _distributed_job,
        "paddlejob": _paddlejob,
        "kubeflow-paddlejob": _kubeflow_paddlejob,
        "collective-job": _collective_job,
        "trainjob": _trainjob,
    }
)


# The spec section that each workload with settings of its own reads (``Workload.settings``), by
# section: whose section a spec holds is told without loading every entry.
SETTINGS_OWNERS = {
    "distributed": "distributed-job",
    "paddlejob": "paddlejob",
    "kubeflow": "kubeflow-paddlejob",
    "collective": "collective-job",
    "trainjob": "trainjob",
}

# The workload of a spec that names none, and what `init` and the SDK propose for parameter
# servers (the entries that say so: Workload.default, Workload.ps_default), found on first use
# (``__getattr__``) by loading the entries in order until one says so.
DEFAULT_WORKLOAD: str
PS_WORKLOAD: str
_FLAGS = {"DEFAULT_WORKLOAD": "default", "PS_WORKLOAD": "ps_default"}


def __getattr__(name: str) -> str:
    if name not in _FLAGS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = next(w.name for w in WORKLOADS.values() if getattr(w, _FLAGS[name]))
    globals()[name] = found
    return found


def workload_of(data: dict[str, Any], name: str | None = None) -> Workload:
    """The registry entry of the workload the spec ``data`` names (the default if none), or
    of ``name``, which overrides it."""
    given = name or data.get("spec", {}).get("workload")
    return WORKLOADS[given if given is not None else __getattr__("DEFAULT_WORKLOAD")]


def rendered_objects() -> list[TrainingObject]:
    """The kinds of training object the workloads render (``Workload.objects``), each once, in
    the registry's order."""
    return each_kind_once(o for w in WORKLOADS.values() for o in w.objects)


def judged_objects() -> list[TrainingObject]:
    """The kinds of object Argo CD judges the health of in a job paddlegen renders, each once:
    every workload's objects and their children, in the registry's order, then what a job may
    hold whatever its workload (``objects.ANY_WORKLOAD``: the data Job, Volcano's PodGroup)."""
    every = [o for w in WORKLOADS.values() for o in (*w.objects, *w.children)]
    return each_kind_once([*every, *ANY_WORKLOAD])


def conversion_targets() -> list[str]:
    """The workloads `paddlegen import --to` converts to (``Workload.converts_from``), by name."""
    return sorted(name for name, w in WORKLOADS.items() if w.converts_from)
