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
return hs
