-- Argo CD health of a batch/v1 Job, replacing Argo CD's built-in one for a Job Kueue resumed.
-- The built-in check counts a Suspended condition of either status as finished (gitops-engine
-- pkg/health/health_job.go:46-49 at Argo CD v3.5.1), and the Job controller keeps that
-- condition, False with reason JobResumed, once a suspended Job is resumed (Kubernetes v1.37.2
-- pkg/controller/job/job_controller.go:1169-1180). Kueue suspends every queued Job on create
-- and resumes it on admission, so Argo CD would call a queued Job Healthy the moment it starts:
-- its Sync hook "Succeeded", the sync over and the next wave started while it trains. Here a
-- Suspended condition counts only when True (k8s.io/api v0.37.2 batch/v1/types.go:681-689):
-- Failed is Degraded, Suspended (queued, or preempted) Suspended, which keeps a hook Running,
-- Complete Healthy, in the built-in check's order (:52-72); anything else is Progressing.
-- Failed and Complete count whatever their status, as there (:37-44), so a Job never
-- suspended gets the status Argo CD's own check gives it. paddlegen appends conditions.lua,
-- which decides.
local ORDER = {{"Failed", "Degraded"}, {"Suspended", "Suspended"}, {"Complete", "Healthy"}}
local ANY_STATUS = {Failed = true, Complete = true}
local WAITING = "Waiting for the Job controller to create the pods"

-- "2 active, 2 ready" from the Job's pod counts.
local function counts(status)
  local parts = {}
  for _, state in ipairs({"active", "ready", "succeeded", "failed"}) do
    local n = status[state]
    if n ~= nil and n > 0 then
      table.insert(parts, tostring(n) .. " " .. state)
    end
  end
  return table.concat(parts, ", ")
end
