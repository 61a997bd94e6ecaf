"""The names paddlegen's TrainJobs and Paddle runtimes share (workloads/trainjob and its
runtime.py): the API, the runtimes, the replicated job and container Trainer fills in.
Trainer's sources cited are github.com/kubeflow/trainer at v2.3.0."""

from __future__ import annotations

from paddlegen.spec.model import COLLECTIVE_PORT

API_VERSION = "trainer.kubeflow.org/v1alpha1"
# paddlegen's runtimes: one for the default scheduler, one that gang-schedules with Volcano
# (spec.scheduling.scheduler: volcano picks it), each also as a queued one (`-queued`, picked
# by spec.scheduling.kueue), whose pod failure policy lets Kueue preempt the TrainJob: a
# runtime's Job spec is the runtime's alone, no runtime patch reaches its podFailurePolicy
# (JobSpecPatch holds only the pod template, trainjob_types.go:371-375); and the image a
# TrainJob that names none runs (paddlegen's TrainJobs always name theirs: spec.image is
# required).
RUNTIME = "paddle-distributed"
VOLCANO_RUNTIME = "paddle-distributed-volcano"
QUEUED_SUFFIX = "-queued"
RUNTIME_IMAGE = "paddlepaddle/paddle:3.3.1"
# The replicated job and the container Trainer fills in from the TrainJob's trainer: it
# looks for the replicated job by the ancestor label and the container by the name `node`
# (pkg/runtime/framework/plugins/jobset/builder.go:130-150, pkg/constants/constants.go).
NODE = "node"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
# The JobSet controller labels every pod with its JobSet's name, which is the TrainJob's
# (jobset v0.12.0 pkg/controllers/jobset_controller.go:1014-1020, labelAndAnnotateObject).
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
# Who owns the TrainJob's one runtime patch. Trainer's webhook wants a domain-prefixed path
# (plugins/jobset/jobset.go:175-176, validation.IsDomainPrefixedPath); the list is keyed by it.
MANAGER = "paddlegen/spec"
# Where rank 0 serves the launcher's rendezvous store: collective-job's default port.
MASTER_PORT = COLLECTIVE_PORT


def runtime_of(*, volcano: bool, queued: bool) -> str:
    """The name of paddlegen's runtime that gang-schedules with Volcano or not, for a job that
    Kueue queues or not."""
    return (VOLCANO_RUNTIME if volcano else RUNTIME) + (QUEUED_SUFFIX if queued else "")
