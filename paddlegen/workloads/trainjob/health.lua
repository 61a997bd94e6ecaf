-- Argo CD health of a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org), from the conditions
-- Trainer v2.3.0 writes (github.com/kubeflow/trainer at v2.3.0):
--   Complete and Failed, copied with their reason and message from the JobSet's Completed and
--   Failed (pkg/runtime/framework/plugins/jobset/jobset.go:450-457);
--   Failed of its own for a runtime it does not know, reason TrainingRuntimeNotSupported, or an
--   exceeded activeDeadlineSeconds, reason DeadlineExceeded
--   (pkg/controller/trainjob_controller.go:103-106, :167-175);
--   Suspended True while spec.suspend is (Kueue suspends a job it has not admitted yet), False
--   once resumed (trainjob_controller.go:213-234).
-- Trainer sets no Created or Running condition: a job with none of these is Progressing, as
-- Argo CD's own batch/v1 Job is while it runs. The counts are the JobSet's, per replicated job,
-- of its child Jobs (jobset.go:459-469).
local ORDER = {{"Failed", "Degraded"}, {"Complete", "Healthy"}, {"Suspended", "Suspended"}}
local WAITING = "Waiting for Trainer to create the JobSet"
local JOBS = "jobsStatus"
