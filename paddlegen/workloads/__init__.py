"""The WORKLOADS registry: one module per workload, each owning all paddlegen knows of it.

Adding a workload touches its module here (a ``Workload`` entry, see ``base``), its template
folder ``templates/<name>/``, its tests and the docs.
"""

from __future__ import annotations

from paddlegen.workloads import collective, distributed, job, kubeflow, paddlejob, trainjob
from paddlegen.workloads.base import Workload

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        job.WORKLOAD,
        distributed.WORKLOAD,
        paddlejob.WORKLOAD,
        kubeflow.WORKLOAD,
        collective.WORKLOAD,
        trainjob.WORKLOAD,
    )
}

DEFAULT_WORKLOAD = "paddlejob"
