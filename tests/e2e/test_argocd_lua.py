"""The Argo CD health checks, run for real in Lua 5.1 (Argo CD's gopher-lua) against sample status.

The scripts are taken from the generated argocd-cm patch, so what is tested is what ships. They
run the way Argo CD runs them: `obj` is the live object, the chunk returns `hs`, and only the
libraries Argo CD opens are in reach.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from paddlegen.gitops import argocd as argo
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_health as argo_health
from paddlegen.yamlio import manifest_documents
from tests.conftest import ROOT
from tests.helpers import assert_sha256sums

lupa = pytest.importorskip("lupa")
try:  # Lua 5.1 semantics, as gopher-lua: every number is a double
    from lupa.lua51 import LuaError, LuaRuntime
except ImportError:  # pragma: no cover - a lupa built without the 5.1 runtime
    from lupa import LuaError, LuaRuntime

SCRIPTS = yaml.safe_load(argo_health.health_configmap()[argo_files.HEALTH_FILE])["data"]
PADDLEFLOW = SCRIPTS["resource.customizations.health.batch.paddlepaddle.org_PaddleJob"]
KUBEFLOW = SCRIPTS["resource.customizations.health.kubeflow.org_PaddleJob"]
PODGROUP = SCRIPTS["resource.customizations.health.scheduling.volcano.sh_PodGroup"]
TRAINJOB = SCRIPTS["resource.customizations.health.trainer.kubeflow.org_TrainJob"]
JOBSET = SCRIPTS["resource.customizations.health.jobset.x-k8s.io_JobSet"]
JOB = SCRIPTS["resource.customizations.health.batch_Job"]
ARGOCD_HEALTH = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}


def to_lua(lua: Any, value: Any) -> Any:
    """A JSON-like Python value as Lua values: dicts and lists become tables (lists 1-based)."""
    if isinstance(value, dict):
        return lua.table_from({k: to_lua(lua, v) for k, v in value.items()})
    if isinstance(value, list):
        return lua.table_from([to_lua(lua, v) for v in value])
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    return float(value)  # JSON numbers reach gopher-lua as float64


def health(script: str, obj: dict[str, Any]) -> tuple[str, str]:
    """(hs.status, hs.message) of ``script`` for the live object ``obj``."""
    lua = LuaRuntime(unpack_returned_tuples=True)
    sandbox = lua.eval("""function(source, obj)
        local env = {obj = obj, ipairs = ipairs, pairs = pairs, tostring = tostring,
                     tonumber = tonumber, type = type, next = next, table = table}
        local chunk = assert(loadstring(source, "health.lua"))
        setfenv(chunk, env)
        return chunk()
    end""")
    hs = sandbox(script, to_lua(lua, obj))
    assert hs["status"] in ARGOCD_HEALTH
    return hs["status"], hs["message"]


def paddleflow(
    phase: str | None = None, policy: str | None = "Never", **roles: dict[str, int]
) -> dict[str, Any]:
    """A PaddleFlow PaddleJob; cleanPodPolicy Never (its pods kept) unless ``policy`` says
    otherwise (None: unset)."""
    status: dict[str, Any] = dict(roles)
    if phase is not None:
        status["phase"] = phase
    return {
        "apiVersion": "batch.paddlepaddle.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "job"},
        "spec": {} if policy is None else {"cleanPodPolicy": policy},
        "status": status,
    }


@pytest.mark.parametrize(
    ("phase", "status", "message"),
    [
        ("Pending", "Progressing", "Pending (worker: 2 pending)"),
        ("Starting", "Progressing", "Starting (worker: 2 starting)"),
        ("Running", "Progressing", "Running (worker: 2 running)"),
        ("Scaling", "Progressing", "Scaling (worker: 2 running)"),
        ("Restarting", "Progressing", "Restarting (worker: 2 running)"),
        ("Completing", "Progressing", "Completing (worker: 2 succeeded)"),
        ("Aborting", "Progressing", "Aborting (worker: 2 running)"),
        ("Terminating", "Progressing", "Terminating (worker: 2 running)"),
        ("Completed", "Healthy", "Completed (worker: 2 succeeded)"),
        ("Succeed", "Healthy", "Succeed (worker: 2 succeeded)"),
        ("Failed", "Degraded", "Failed (worker: 1 running, 1 failed)"),
        ("Aborted", "Degraded", "Aborted (worker: 2 failed)"),
        ("Terminated", "Degraded", "Terminated (worker: 2 failed)"),
        ("Unknown", "Unknown", "Unknown (worker: 2 unknown)"),
    ],
)
def test_paddleflow_paddlejob_phases(phase, status, message):
    state = message.split("(worker: ")[1].rstrip(")")
    counts = {part.split()[1]: int(part.split()[0]) for part in state.split(", ")}
    assert health(PADDLEFLOW, paddleflow(phase, worker=counts)) == (status, message)


@pytest.mark.parametrize(
    ("phase", "policy", "cleaned"),
    [
        ("Completed", None, True),
        ("Completed", "OnCompletion", True),
        ("Completed", "Always", True),
        ("Completed", "OnFailure", False),
        ("Failed", "OnFailure", True),
        ("Failed", "Always", True),
        ("Failed", "OnCompletion", False),
        ("Failed", None, False),
    ],
)
def test_a_finished_paddleflow_job_is_done_once_the_operator_deleted_its_pods(
    phase, policy, cleaned
):
    """The operator writes the job after each pod it deletes; Argo CD, removing its hook
    finalizer from a done job, fails the sync if the job changed under it (seen live)."""
    done = "Healthy" if phase == "Completed" else "Degraded"
    cleaning = health(PADDLEFLOW, paddleflow(phase, policy, worker={"succeeded": 2}))
    if cleaned:
        assert cleaning == (
            "Progressing",
            f"{phase}, the operator deleting its pods (worker: 2 succeeded)",
        )
    else:
        assert cleaning == (done, f"{phase} (worker: 2 succeeded)")
    assert health(PADDLEFLOW, paddleflow(phase, policy)) == (done, phase)  # no pods left


def test_paddleflow_message_lists_every_role_in_order():
    obj = paddleflow(
        "Running",
        worker={"running": 2, "pending": 1, "failed": 0},
        heter={"running": 1},
        ps={"running": 1},
    )
    assert health(PADDLEFLOW, obj) == (
        "Progressing",
        "Running (ps: 1 running; worker: 1 pending, 2 running; heter: 1 running)",
    )


def test_paddleflow_before_the_operator_and_with_an_unknown_phase():
    assert health(PADDLEFLOW, paddleflow()) == (
        "Progressing",
        "Waiting for the paddle-operator to start the job",
    )
    no_status = {"apiVersion": "batch.paddlepaddle.org/v1", "kind": "PaddleJob", "metadata": {}}
    assert health(PADDLEFLOW, no_status)[0] == "Progressing"
    assert health(PADDLEFLOW, paddleflow("Hibernating")) == (
        "Unknown",
        "Phase Hibernating is not known to this health check",
    )


def kubeflow(*conditions: tuple[str, str, str], **replicas: dict[str, int]) -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [
            {"type": kind, "status": flag, "reason": f"PaddleJob{kind}", "message": message}
            for kind, flag, message in conditions
        ]
    }
    if replicas:
        status["replicaStatuses"] = replicas
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "job"},
        "status": status,
    }


CREATED = ("Created", "True", "PaddleJob ml/job is created.")
RUNNING = ("Running", "True", "PaddleJob ml/job is running.")
NOT_RUNNING = ("Running", "False", "PaddleJob ml/job is running.")


@pytest.mark.parametrize(
    ("conditions", "status", "message"),
    [
        ([CREATED], "Progressing", "PaddleJob ml/job is created."),
        ([CREATED, RUNNING], "Progressing", "PaddleJob ml/job is running."),
        (
            [CREATED, NOT_RUNNING, ("Restarting", "True", "PaddleJob ml/job is restarting.")],
            "Progressing",
            "PaddleJob ml/job is restarting.",
        ),
        (
            [
                CREATED,
                NOT_RUNNING,
                ("Succeeded", "True", "PaddleJob ml/job successfully completed."),
            ],
            "Healthy",
            "PaddleJob ml/job successfully completed.",
        ),
        # Failed wins even where an operator left Running True beside it.
        (
            [CREATED, RUNNING, ("Failed", "True", "PaddleJob ml/job has failed.")],
            "Degraded",
            "PaddleJob ml/job has failed.",
        ),
        (
            [CREATED, NOT_RUNNING, ("Suspended", "True", "PaddleJob ml/job is suspended.")],
            "Suspended",
            "PaddleJob ml/job is suspended.",
        ),
        ([], "Progressing", "Waiting for the training operator to create the job"),
    ],
)
def test_kubeflow_paddlejob_conditions(conditions, status, message):
    assert health(KUBEFLOW, kubeflow(*conditions)) == (status, message)


def test_kubeflow_message_counts_replicas_sorted_and_falls_back_to_the_reason():
    obj = kubeflow(
        CREATED, RUNNING, Worker={"active": 2, "failed": 1}, Master={"active": 1}, Idle={}
    )
    assert health(KUBEFLOW, obj) == (
        "Progressing",
        "PaddleJob ml/job is running. (Master: 1 active; Worker: 2 active, 1 failed)",
    )
    del obj["status"]["conditions"][1]["message"]
    del obj["status"]["replicaStatuses"]
    assert health(KUBEFLOW, obj) == ("Progressing", "PaddleJobRunning")
    assert (
        health(KUBEFLOW, {"apiVersion": "kubeflow.org/v1", "kind": "PaddleJob"})[0] == "Progressing"
    )


def podgroup(
    phase: str | None = None, conditions: list[dict[str, str]] | None = None, **counts: int
) -> dict[str, Any]:
    status: dict[str, Any] = dict(counts)
    if phase is not None:
        status["phase"] = phase
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job"},
        "spec": {"minMember": 3, "queue": "training"},
        "status": status,
    }


UNSCHEDULABLE = {
    "type": "Unschedulable",
    "status": "True",
    "reason": "NotEnoughResources",
    "message": "3/3 tasks in gang unschedulable: pod group is not ready",
}


@pytest.mark.parametrize(
    ("obj", "status", "message"),
    [
        (podgroup(), "Healthy", "Waiting for the Volcano scheduler to pick up the gang of 3"),
        (podgroup("Pending"), "Healthy", "Pending: waiting for the gang of 3 pods (no pods yet)"),
        (
            podgroup("Pending", [UNSCHEDULABLE]),
            "Healthy",
            "Pending: waiting for the gang of 3 pods (no pods yet): "
            "3/3 tasks in gang unschedulable: pod group is not ready",
        ),
        (
            podgroup("Inqueue"),
            "Healthy",
            "Inqueue: admitted to queue training, waiting for the gang of 3 pods (no pods yet)",
        ),
        (
            podgroup("Running", [UNSCHEDULABLE], running=3),
            "Healthy",
            "Running: 3 running (minMember 3)",
        ),
        (
            podgroup("Completed", succeeded=2, failed=1),
            "Healthy",
            "Completed: 2 succeeded, 1 failed",
        ),
        (
            podgroup("Unknown", [UNSCHEDULABLE], running=1),
            "Degraded",
            "Unknown: part of the gang of 3 runs and the rest cannot be scheduled (1 running): "
            "3/3 tasks in gang unschedulable: pod group is not ready",
        ),
        (podgroup("Hibernating"), "Healthy", "Phase Hibernating is not known to this health check"),
    ],
)
def test_volcano_podgroup_phases(obj, status, message):
    assert health(PODGROUP, obj) == (status, message)


def test_a_podgroup_never_holds_up_the_sync_waves():
    """Argo CD starts the next wave only when the earlier ones are Healthy or Degraded; the
    PodGroup (wave 1) waits for pods that only come in wave 3."""
    for phase in (None, "Pending", "Inqueue", "Running", "Completed", "Unknown", "Other"):
        assert health(PODGROUP, podgroup(phase))[0] in {"Healthy", "Degraded"}


# The conditions as the controllers write them (type, status, reason, message). JobSet v0.12.0
# (sigs.k8s.io/jobset at v0.12.0): the reasons and messages of pkg/constants/constants.go:51-106,
# set by pkg/controllers/jobset_controller.go:1274-1346 (Completed, Suspended, and
# RestartingJobSet False beside each), failure_policy.go:49-61 and :404-424 (Failed with the
# first failed Job, the runtime having no failurePolicy), startup_policy.go:40-62.
JS_COMPLETED = ("Completed", "True", "AllJobsCompleted", "jobset completed successfully")
JS_FAILED = (
    "Failed",
    "True",
    "FailedJobs",
    "jobset failed due to one or more job failures (first failed job: resnet-node-0)",
)
JS_SUSPENDED = ("Suspended", "True", "SuspendedJobs", "jobset is suspended")
JS_RESUMED = ("Suspended", "False", "ResumeJobs", "jobset is resumed")
JS_NOT_RESTARTING = ("RestartingJobSet", "False", "JobSetFailed", "jobset failed")
JS_RESTARTING = (  # a runtime with a failurePolicy that restarts (failure_policy.go:225-262)
    "RestartingJobSet",
    "True",
    "DefaultFailurePolicy",
    "applying RestartJobSet failure policy action (first failed job: resnet-node-0)",
)
JS_OUT_OF_RESTARTS = (  # failure_policy.go:225-231
    "Failed",
    "True",
    "ReachedMaxRestarts",
    "jobset failed due to reaching max number of restarts (first failed job: resnet-worker-0)",
)
JS_STARTING = (
    "StartupPolicyInProgress",
    "True",
    "InOrderStartupPolicyInProgress",
    "in order startup policy is in progress",
)
JS_STARTED = (
    "StartupPolicyCompleted",
    "True",
    "InOrderStartupPolicyCompleted",
    "in order startup policy has completed",
)
# Trainer v2.3.0 (github.com/kubeflow/trainer at v2.3.0): Complete and Failed are the JobSet's
# Completed and Failed under another type, reason and message kept
# (pkg/runtime/framework/plugins/jobset/jobset.go:450-457); its own Failed for an unknown runtime
# and an exceeded deadline, and Suspended, pkg/controller/trainjob_controller.go:103-106,
# :167-175, :213-244 with the messages of pkg/constants/constants.go:77-88.
TJ_COMPLETE = ("Complete", *JS_COMPLETED[1:])
TJ_FAILED = ("Failed", *JS_FAILED[1:])
TJ_SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
TJ_RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")
TJ_DEADLINE = ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")
TJ_UNSUPPORTED = (  # the runtimeRef's kind and group (pkg/runtime/runtime.go:246-251)
    "Failed",
    "True",
    "TrainingRuntimeNotSupported",
    "unsupported runtime: TrainingRuntime.example.com",
)
# Counts of child Jobs per replicated job: JobSet's status.replicatedJobsStatus, which Trainer
# copies to the TrainJob's status.jobsStatus (jobset.go:459-469).
NODE_ACTIVE = {"name": "node", "active": 1, "ready": 1, "succeeded": 0, "failed": 0, "suspended": 0}
NODE_DONE = {"name": "node", "active": 0, "ready": 0, "succeeded": 1, "failed": 0, "suspended": 0}
NODE_FAILED = {"name": "node", "active": 0, "ready": 0, "succeeded": 0, "failed": 1, "suspended": 0}
WORKER_ACTIVE = {**NODE_ACTIVE, "name": "worker"}
WORKER_FAILED = {**NODE_FAILED, "name": "worker"}
NODE_SUSPENDED = {
    "name": "node", "active": 0, "ready": 0, "succeeded": 0, "failed": 0, "suspended": 1
}  # fmt: skip


def conditioned(
    api: str, kind: str, jobs_field: str, conditions: list[tuple[str, str, str, str]], jobs: list
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [
            {
                "type": kind_,
                "status": flag,
                "reason": reason,
                "message": message,
                "lastTransitionTime": "2026-11-27T10:00:00Z",
            }
            for kind_, flag, reason, message in conditions
        ]
    }
    if jobs:
        status[jobs_field] = jobs
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "resnet"}, "status": status}


def train_job(*conditions, jobs=()) -> dict[str, Any]:
    return conditioned(
        "trainer.kubeflow.org/v1alpha1", "TrainJob", "jobsStatus", list(conditions), list(jobs)
    )


def job_set(*conditions, jobs=()) -> dict[str, Any]:
    return conditioned(
        "jobset.x-k8s.io/v1alpha2", "JobSet", "replicatedJobsStatus", list(conditions), list(jobs)
    )


@pytest.mark.parametrize(
    ("obj", "status", "message"),
    [
        (train_job(), "Progressing", "Waiting for Trainer to create the JobSet"),
        (train_job(jobs=[NODE_ACTIVE]), "Progressing", "Running (node: 1 active, 1 ready)"),
        # Kueue admitted it: resumed, running
        (
            train_job(TJ_RESUMED, jobs=[NODE_ACTIVE]),
            "Progressing",
            "Running (node: 1 active, 1 ready)",
        ),
        (
            train_job(TJ_COMPLETE, jobs=[NODE_DONE]),
            "Healthy",
            "jobset completed successfully (node: 1 succeeded)",
        ),
        (
            train_job(TJ_FAILED, jobs=[NODE_FAILED]),
            "Degraded",
            "jobset failed due to one or more job failures (first failed job: resnet-node-0) "
            "(node: 1 failed)",
        ),
        (train_job(TJ_DEADLINE), "Degraded", "TrainJob exceeded its active deadline"),
        (
            train_job(TJ_UNSUPPORTED),
            "Degraded",
            "unsupported runtime: TrainingRuntime.example.com",
        ),
        # queued by Kueue: suspended before any pod
        (
            train_job(TJ_SUSPENDED, jobs=[NODE_SUSPENDED]),
            "Suspended",
            "TrainJob is suspended (node: 1 suspended)",
        ),
        # failed while a resume was in flight: the failure decides
        (train_job(TJ_SUSPENDED, TJ_DEADLINE), "Degraded", "TrainJob exceeded its active deadline"),
    ],
)
def test_trainjob_conditions(obj, status, message):
    assert health(TRAINJOB, obj) == (status, message)


def restarted(obj: dict[str, Any], restarts: int) -> dict[str, Any]:
    """``obj``, a JobSet whose controller restarted its group ``restarts`` times."""
    return {**obj, "status": {**obj["status"], "restarts": restarts}}


@pytest.mark.parametrize(
    ("obj", "status", "message"),
    [
        (job_set(), "Progressing", "Waiting for the JobSet controller to create the Jobs"),
        (job_set(jobs=[NODE_ACTIVE]), "Progressing", "Running (node: 1 active, 1 ready)"),
        (
            job_set(JS_COMPLETED, JS_NOT_RESTARTING, jobs=[NODE_DONE]),
            "Healthy",
            "jobset completed successfully (node: 1 succeeded)",
        ),
        (
            job_set(JS_NOT_RESTARTING, JS_FAILED, jobs=[NODE_FAILED]),
            "Degraded",
            "jobset failed due to one or more job failures (first failed job: resnet-node-0) "
            "(node: 1 failed)",
        ),
        (
            job_set(JS_SUSPENDED, JS_NOT_RESTARTING, jobs=[NODE_SUSPENDED]),
            "Suspended",
            "jobset is suspended (node: 1 suspended)",
        ),
        (
            job_set(JS_RESUMED, jobs=[NODE_ACTIVE]),
            "Progressing",
            "Running (node: 1 active, 1 ready)",
        ),
        (
            job_set(JS_RESTARTING, jobs=[NODE_FAILED]),
            "Progressing",
            "applying RestartJobSet failure policy action (first failed job: resnet-node-0) "
            "(node: 1 failed)",
        ),
        (
            # a collective-job with run.restarts, restarting its group
            restarted(job_set(JS_RESTARTING, jobs=[WORKER_ACTIVE]), 1),
            "Progressing",
            "applying RestartJobSet failure policy action (first failed job: resnet-node-0) "
            "(restarts: 1; worker: 1 active, 1 ready)",
        ),
        (
            # ... and once its restarts are used up
            restarted(job_set(JS_OUT_OF_RESTARTS, jobs=[WORKER_FAILED]), 2),
            "Degraded",
            "jobset failed due to reaching max number of restarts (first failed job: "
            "resnet-worker-0) (restarts: 2; worker: 1 failed)",
        ),
        (job_set(JS_STARTING), "Progressing", "in order startup policy is in progress"),
        (
            job_set(JS_STARTED, jobs=[NODE_ACTIVE]),
            "Progressing",
            "Running (node: 1 active, 1 ready)",
        ),
    ],
)
def test_jobset_conditions(obj, status, message):
    assert health(JOBSET, obj) == (status, message)


def batch_job(*conditions: tuple[str, str, str, str], **counts: int) -> dict[str, Any]:
    """A batch/v1 Job with ``conditions`` (type, status, reason, message) and pod counts."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "resnet"},
        "status": {
            **counts,
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conditions
            ],
        },
    }


# What the Job controller writes (Kubernetes v1.37.2 pkg/controller/job/job_controller.go)
JOB_SUSPENDED = ("Suspended", "True", "JobSuspended", "Job suspended")
JOB_RESUMED = ("Suspended", "False", "JobResumed", "Job resumed")
JOB_COMPLETE = (
    "Complete",
    "True",
    "CompletionsReached",
    "Reached expected number of succeeded pods",
)
JOB_FAILED = (
    "Failed",
    "True",
    "BackoffLimitExceeded",
    "Job has reached the specified backoff limit",
)
JOB_FAILING = ("FailureTarget", "True", "PodFailurePolicy", "Container paddle failed")


@pytest.mark.parametrize(
    ("obj", "status", "message"),
    [
        (batch_job(), "Progressing", "Waiting for the Job controller to create the pods"),
        (batch_job(active=2, ready=2), "Progressing", "Running (2 active, 2 ready)"),
        # queued by Kueue, or preempted: a Sync hook stays Running
        (batch_job(JOB_SUSPENDED), "Suspended", "Job suspended"),
        # admitted and resumed: still running. Argo CD's own check says Healthy here.
        (batch_job(JOB_RESUMED, active=2), "Progressing", "Running (2 active)"),
        (
            batch_job(JOB_RESUMED, JOB_COMPLETE, succeeded=2),
            "Healthy",
            "Reached expected number of succeeded pods (2 succeeded)",
        ),
        # failing: the pods are being stopped; Failed follows (the built-in check waits too)
        (batch_job(JOB_FAILING, active=1, failed=1), "Progressing", "Running (1 active, 1 failed)"),
        (
            batch_job(JOB_FAILING, JOB_FAILED, failed=1),
            "Degraded",
            "Job has reached the specified backoff limit (1 failed)",
        ),
    ],
)
def test_batch_job_conditions(obj, status, message):
    assert health(JOB, obj) == (status, message)


# gitops-engine's own fixtures of its Job health check, at the version Argo CD v3.5.1 builds,
# with the status its test expects (tests/data/gitops-engine/SOURCES.md).
GITOPS_ENGINE = ROOT / "tests" / "data" / "gitops-engine"
BUILT_IN = {
    "job-running.yaml": "Progressing",
    "job-failed.yaml": "Degraded",
    "job-succeeded.yaml": "Healthy",
    "job-suspended.yaml": "Suspended",
}


def test_the_fixtures_are_the_recorded_upstream_files():
    assert sorted(assert_sha256sums(GITOPS_ENGINE)) == sorted(BUILT_IN)


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_a_gitops_engine_fixture_gets_the_built_in_status(name):
    # Timestamps kept as text, as Argo CD's Lua gets them (JSON).
    ((job, _),) = manifest_documents((GITOPS_ENGINE / name).read_text(encoding="utf-8"))
    assert health(JOB, job)[0] == BUILT_IN[name]


def built_in_job_health(conditions: list[tuple[str, str]]) -> str:
    """Argo CD's own status of a batch/v1 Job (gitops-engine pkg/health/health_job.go:30-75 at
    Argo CD v3.5.1): a condition's type counts whatever its status (a Suspended one of either
    status makes the Job finished), except that it suspends only when True."""
    types = {t for t, _ in conditions}
    if not types & {"Failed", "Complete", "Suspended"}:
        return "Progressing"
    if "Failed" in types:
        return "Degraded"
    return "Suspended" if ("Suspended", "True") in conditions else "Healthy"


# Every combination of the conditions a Job can carry, each absent, True or False: those of the
# built-in check, and FailureTarget and SuccessCriteriaMet, which precede Failed and Complete
# (Kubernetes v1.37.2 pkg/controller/job/job_controller.go) and which neither check reads.
JOB_CONDITIONS = ("FailureTarget", "Failed", "SuccessCriteriaMet", "Complete", "Suspended")
COMBINATIONS = [
    [(t, s) for t, s in zip(JOB_CONDITIONS, states, strict=True) if s]
    for states in itertools.product(("", "True", "False"), repeat=len(JOB_CONDITIONS))
]


@pytest.mark.parametrize("conditions", COMBINATIONS, ids=str)
def test_the_job_check_differs_from_the_built_in_only_for_a_resumed_job(conditions):
    obj = batch_job(*((t, s, "Reason", "message") for t, s in conditions))
    ours, built_in = health(JOB, obj)[0], built_in_job_health(conditions)
    finished = {t for t, _ in conditions} & {"Failed", "Complete"}
    if ("Suspended", "False") in conditions and not finished:
        # Resumed (by Kueue) and neither Complete nor Failed: still running, not done.
        assert (ours, built_in) == ("Progressing", "Healthy")
    else:
        assert ours == built_in


def test_a_condition_without_a_message_says_its_reason_and_no_status_is_progressing():
    bare = train_job(("Failed", "True", "DeadlineExceeded", ""))
    del bare["status"]["conditions"][0]["message"]
    assert health(TRAINJOB, bare) == ("Degraded", "DeadlineExceeded")
    for script, kind in ((TRAINJOB, "TrainJob"), (JOBSET, "JobSet")):
        assert health(script, {"apiVersion": "v1", "kind": kind, "metadata": {}})[0] == (
            "Progressing"
        )


def test_the_scripts_use_only_what_argocd_opens():
    """Argo CD runs a health check of argocd-cm with Lua's base, table, package and a safe os
    library only (util/lua/lua.go, runLua, at v3.5.1): no string or math library, whose
    functions would be nil there and fail the check ("attempt to index a non-table object").
    The sandbox above holds the globals the scripts use of those, and no string or math."""
    lua = LuaRuntime()
    for key, script in SCRIPTS.items():
        assert lua.eval("function(s) return loadstring(s) ~= nil end")(script), key
    for leaky in ("string.format('%d', 1)", "math.floor(1.5)"):
        with pytest.raises(LuaError, match="a nil value"):
            health(f"local x = {leaky} return {{status = 'Healthy', message = ''}}", paddleflow())


GO_NAMES = """\
package main

import (
\t"fmt"
\t"os"
\t"strings"
\t"text/template"
)

func main() {
\tt := template.Must(template.New("name").Option("missingkey=error").Parse(os.Args[1]))
\tfor _, arg := range os.Args[2:] {
\t\t// FOLDER[@NAMESPACE]: the kustomization's folder and its namespace field, if any
\t\tdir, namespace, named := strings.Cut(arg, "@")
\t\tsegments := strings.Split(dir, "/")
\t\tparams := map[string]any{"path": map[string]any{
\t\t\t"path": dir, "basename": segments[len(segments)-1], "segments": segments}}
\t\tif named {
\t\t\tparams["namespace"] = namespace
\t\t}
\t\tif err := t.Execute(os.Stdout, params); err != nil {
\t\t\tpanic(err)
\t\t}
\t\tfmt.Println()
\t}
}
"""


@pytest.fixture(scope="module")
def go_names(tmp_path_factory) -> str:
    """A program that renders a name template for each folder, built once."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed")
    folder = tmp_path_factory.mktemp("go-names")
    (folder / "main.go").write_text(GO_NAMES)
    # Offline and with the installed toolchain; the default build cache keeps it fast.
    env = {**os.environ, "GOPROXY": "off", "GOTOOLCHAIN": "local", "GO111MODULE": "off"}
    result = subprocess.run(
        [go, "build", "-o", "names", "main.go"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return str(folder / "names")


@pytest.mark.parametrize(
    ("prefix", "env", "dirs", "names"),
    [
        ("deploy", None, ["deploy/flat", "deploy/staged/overlays/prod"], ["flat", "staged-prod"]),
        (
            "gitops/deploy",
            "prod",
            ["gitops/deploy/flat", "gitops/deploy/staged/overlays/prod"],
            ["flat-prod", "staged-prod"],
        ),
        (".", None, ["flat", "staged/overlays/dev"], ["flat", "staged-dev"]),
    ],
)
def test_applicationset_names_match_the_applications_mode(go_names, prefix, env, dirs, names):
    """The ApplicationSet's name template, run by Go's text/template on the parameters the git
    files generator gives (path.path, path.basename, path.segments of the kustomization's folder),
    names each app as --mode applications does."""
    appset = yaml.safe_load(
        argo.application_set(argo.Target("r", path_prefix=prefix), env)[argo.APPLICATIONSET_FILE]
    )
    template = appset["spec"]["template"]["metadata"]["name"]
    result = subprocess.run(
        [go_names, template, *dirs], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == names
    jobs = {"flat": [], "staged": [d.rsplit("/", 1)[1] for d in dirs if "/overlays/" in d]}
    assert sorted(argo.application_sources(jobs, env)) == names


@pytest.mark.parametrize("fallback", [None, "ml-default"])
def test_applicationset_namespace_is_the_kustomizations_else_the_destinations(go_names, fallback):
    """The destination namespace template, run by Go's text/template with missingkey=error on
    the parameters the files generator gives: a kustomization's `namespace` field when it has
    one, else the destination's namespace (or none)."""
    target = argo.Target("r", dest_namespace=fallback)
    appset = yaml.safe_load(argo.application_set(target)[argo.APPLICATIONSET_FILE])
    template = appset["spec"]["template"]["spec"]["destination"]["namespace"]
    dirs = ["deploy/a@ml", "deploy/b", "deploy/c/overlays/prod@ml-prod"]
    result = subprocess.run(
        [go_names, template, *dirs], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["ml", fallback or "", "ml-prod"]
