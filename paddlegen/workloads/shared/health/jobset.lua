-- Argo CD health of a JobSet (jobset.x-k8s.io), which Trainer makes for each TrainJob and a
-- collective-job with group restarts is, from the conditions the JobSet controller v0.12.0
-- writes (sigs.k8s.io/jobset at v0.12.0, api/jobset/v1alpha2/jobset_types.go:103-117):
--   Completed, reason AllJobsCompleted (pkg/controllers/jobset_controller.go:1274-1281, 1308-1319);
--   Failed, reason FailedJobs and the first failed Job in its message when no failurePolicy
--   restarts it (paddlegen's runtimes have none), else the policy's reason, ReachedMaxRestarts
--   once its restarts are used up (pkg/controllers/failure_policy.go:49-61, :225-231, :404-424);
--   Suspended True while spec.suspend is, False once resumed (jobset_controller.go:1283-1346);
--   RestartingJobSet True while a failure policy recreates its Jobs (failure_policy.go:250-295),
--   StartupPolicyInProgress while an in-order startup waits (pkg/controllers/startup_policy.go:
--   40-62): both are still running.
-- The counts are per replicated job, of its child Jobs (status.replicatedJobsStatus).
local ORDER = {
  {"Failed", "Degraded"}, {"Completed", "Healthy"}, {"Suspended", "Suspended"},
  {"RestartingJobSet", "Progressing"}, {"StartupPolicyInProgress", "Progressing"},
}
local WAITING = "Waiting for the JobSet controller to create the Jobs"
local JOBS = "replicatedJobsStatus"
