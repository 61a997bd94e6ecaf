-- Argo CD health of a PaddleFlow PaddleJob (batch.paddlepaddle.org), from status.phase as the
-- paddle-operator sets it; the message adds the pod counts the operator keeps per role.
-- A running job is Progressing, as Argo CD's own batch/v1 Job is: it is not done yet.
local hs = {}
local status = obj.status or {}
local phase = status.phase or ""

local HEALTH = {
  Pending = "Progressing", Starting = "Progressing", Running = "Progressing",
  Scaling = "Progressing", Restarting = "Progressing", Completing = "Progressing",
  Aborting = "Progressing", Terminating = "Progressing",
  Completed = "Healthy", Succeed = "Healthy",
  Failed = "Degraded", Aborted = "Degraded", Terminated = "Degraded",
  Unknown = "Unknown",
}
local STATES = {"pending", "starting", "running", "succeeded", "failed", "unknown"}
-- The cleanPodPolicy values under which the operator deletes a finished job's pods, by
-- health (paddle-operator v0.3.5 controllers/paddlejob_controller.go:188-199).
local CLEANS = {
  Healthy = {[""] = true, Always = true, OnCompletion = true},
  Degraded = {Always = true, OnFailure = true},
}

-- "worker: 2 running, 1 pending; ps: 1 running" from status.<role>.<state> counts.
local function pods()
  local roles = {}
  for _, role in ipairs({"ps", "worker", "heter"}) do
    local counts = status[role]
    if counts ~= nil then
      local parts = {}
      for _, state in ipairs(STATES) do
        local n = counts[state]
        if n ~= nil and n > 0 then
          table.insert(parts, tostring(n) .. " " .. state)
        end
      end
      if #parts > 0 then
        table.insert(roles, role .. ": " .. table.concat(parts, ", "))
      end
    end
  end
  return table.concat(roles, "; ")
end

if phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the paddle-operator to start the job"
  return hs
end
hs.status = HEALTH[phase] or "Unknown"
hs.message = phase
if HEALTH[phase] == nil then
  hs.message = "Phase " .. phase .. " is not known to this health check"
end
local counts = pods()
if counts ~= "" then
  hs.message = hs.message .. " (" .. counts .. ")"
end
-- A finished job whose pods the operator deletes is done once they are gone: it writes the
-- job's status after each, and Argo CD, which removes its hook finalizer from the job as soon
-- as it is done, fails the sync when the job changed under it five times in a row
-- (gitops-engine pkg/sync/sync_context.go:849-893 at v3.5.1; seen live).
local cleans = CLEANS[hs.status]
if cleans ~= nil and cleans[(obj.spec or {}).cleanPodPolicy or ""] and counts ~= "" then
  hs.status = "Progressing"
  hs.message = phase .. ", the operator deleting its pods (" .. counts .. ")"
end
return hs
