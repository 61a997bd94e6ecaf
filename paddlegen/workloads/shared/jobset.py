"""A group of ranks that restarts (spec.run.restarts): a JobSet, whose controller stops every
rank and starts them all again when one fails. A `collective-job` renders one instead of its
Indexed Job; a `trainjob`'s own TrainingRuntime is the template of one.

The JobSet has one replicated job, `worker`, of one Indexed Job with the same shape and pods as
the plain collective-job. Why a JobSet only when restarts are asked: the Job controller alone
cannot restart a group (a rank re-created alone never rejoins the others, the launcher's
rendezvous happens once), so restarts need an engine; the JobSet controller is that engine, and
Trainer v2 runs on it, but it is one more controller to install, and a job that asks for no
restarts keeps working on a cluster without it.

JobSet's sources cited are sigs.k8s.io/jobset at v0.12.0."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paddlegen.workloads.objects import JOBSET

if TYPE_CHECKING:
    from paddlegen.spec.model import Job

KIND = JOBSET.kind
REPLICATED_JOB = "worker"
# The JobSet controller writes the group's attempt (its status.restarts when it made the pod's
# Job) on every pod (pkg/controllers/jobset_controller.go:1014-1043, labelAndAnnotateObject;
# pkg/constants/constants.go RestartsKey).
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
ATTEMPT_ENV_SOURCE = {
    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{RESTART_ATTEMPT}']"}}
}


def pod_host(name: str, index: int, replicated_job: str = REPLICATED_JOB) -> str:
    """Pod ``index``'s hostname: its Job is `<jobset>-<replicated job>-<job index>`
    (pkg/util/placement GenJobName), and an Indexed Job names pod i's host `<job>-<i>`; the
    JobSet's headless Service, the pods' subdomain, is named after the JobSet
    (jobset_controller.go:788-830, subdomain defaulted by pkg/webhooks/jobset_webhook.go)."""
    return f"{name}-{replicated_job}-0-{index}"


# What stands for the 5 random characters that end a pod's name in the name JobSet checks.
POD_NAME_RANDOM = "xxxxx"


def longest_pod_name(name: str, pods: int, replicated_job: str = REPLICATED_JOB) -> str:
    """The longest pod name of a JobSet ``name`` whose one replicated job runs ``pods`` pods,
    as its webhook checks it: the last pod's `<jobset>-<replicated job>-0-<pods - 1>` and its
    5 random characters. The webhook refuses the JobSet when that is no DNS-1035 label of at
    most 63 characters (pkg/webhooks/jobset_webhook.go:243-255, which adds "-abcde";
    pkg/util/placement/placement.go:20-22, GenPodName)."""
    return f"{pod_host(name, pods - 1, replicated_job)}-{POD_NAME_RANDOM}"


# A child Job fails when its pod failure policy fails it (any rank's non-zero exit or
# eviction, the reason PodFailurePolicy) or a counted failure exceeds its backoffLimit of 0
# (BackoffLimitExceeded: any failed rank of a queued job). The JobSet then applies the
# first rule whose reasons and message patterns match its Job's Failed condition, and with no
# match, RestartJobSet (pkg/controllers/failure_policy.go:42-80, :138-160): every Job deleted
# and made again, counted against maxRestarts; once they are used up the JobSet fails
# (ReachedMaxRestarts).
# One failure restarting cannot mend fails the JobSet at once: the master wrapper's exit when
# a pod has no PADDLE_NNODES (the Job's message names the exit code,
# pkg/controller/job/pod_failure_policy.go at Kubernetes v1.37.2); a queued job's Job counts
# that exit instead (its reason is then BackoffLimitExceeded), and uses up its restarts.
# Evictions count as restarts too: the Job's message says only that a pod had the
# DisruptionTarget condition, not who evicted it, and the kubelet's own evictions (a pod over
# its ephemeral storage or /dev/shm, node memory pressure) are the job's doing and would come
# back at every attempt; not counted, they would restart the group for ever. A Kueue
# preemption is no failure: Kueue suspends the JobSet, which suspends its Jobs
# (jobset_controller.go:562-573), and the pods it stops are not counted (the queued pod
# failure policy, shared/launcher.py).
def failure_policy(restarts: int, no_node_count_exit: int) -> dict[str, Any]:
    return {
        "maxRestarts": restarts,
        "rules": [
            {
                "name": "NoNodeCount",
                "action": "FailJobSet",
                "onJobFailureReasons": ["PodFailurePolicy"],
                "onJobFailureMessagePatterns": [
                    f"failed with exit code {no_node_count_exit} matching FailJob rule"
                ],
            }
        ],
    }


def jobset_fields(job: Job, no_node_count_exit: int) -> dict[str, Any]:
    """The JobSet's own spec fields besides its replicated job, in the order written."""
    ttl = job.run.ttlSecondsAfterFinished
    return {
        **({"ttlSecondsAfterFinished": ttl} if ttl is not None else {}),
        # JobSet's defaults, said (jobset_webhook.go): rank 0's name resolves before any pod
        # is ready, as a rank waits for the others before it could be.
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "failurePolicy": failure_policy(job.run.restarts, no_node_count_exit),
    }
