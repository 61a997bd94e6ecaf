"""The WORKLOADS registry: one folder per workload, each owning all paddlegen knows of it.

``paddlegen/workloads/<package>/`` holds a workload's ``Workload`` entry (see ``base``) and
everything else paddlegen knows of it; ``templates/<name>/`` its templates. Adding a workload
touches its folder, its template folder, the line below, its tests and its docs page, then
``python -m scripts.generate`` writes it into the schema and the docs. The rest of the package
asks the registry, never a workload's name: the Argo CD health checks and ignoreDifferences
come from the kinds of object the workloads list (``objects``).
"""

from __future__ import annotations

from typing import Any

from paddlegen.workloads import (
    collective_job,
    distributed_job,
    job,
    kubeflow_paddlejob,
    paddlejob,
    trainjob,
)
from paddlegen.workloads.base import Workload
from paddlegen.workloads.objects import ANY_WORKLOAD, TrainingObject, each_kind_once

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        job.WORKLOAD,
        distributed_job.WORKLOAD,
        paddlejob.WORKLOAD,
        kubeflow_paddlejob.WORKLOAD,
        collective_job.WORKLOAD,
        trainjob.WORKLOAD,
    )
}
# The workload of a spec that names none, and what `init` and the SDK propose for parameter
# servers (the entries that say so: Workload.default, Workload.ps_default).
DEFAULT_WORKLOAD = next(w.name for w in WORKLOADS.values() if w.default)
PS_WORKLOAD = next(w.name for w in WORKLOADS.values() if w.ps_default)


def workload_of(data: dict[str, Any], name: str | None = None) -> Workload:
    """The registry entry of the workload the spec ``data`` names (the default if none), or
    of ``name``, which overrides it."""
    return WORKLOADS[name or data.get("spec", {}).get("workload", DEFAULT_WORKLOAD)]


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
