"""The WORKLOADS registry: one folder per workload, each owning all paddlegen knows of it.

``paddlegen/workloads/<package>/`` holds a workload's ``Workload`` entry (see ``base``) and
everything else paddlegen knows of it; ``templates/<name>/`` its templates. Adding a workload
touches its folder, its template folder, the line below, its tests and its docs page.
"""

from __future__ import annotations

from paddlegen.workloads import (
    collective_job,
    distributed_job,
    job,
    kubeflow_paddlejob,
    paddlejob,
    trainjob,
)
from paddlegen.workloads.base import Workload

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
