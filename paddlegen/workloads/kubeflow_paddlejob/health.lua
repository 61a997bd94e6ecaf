-- Argo CD health of a Kubeflow PaddleJob (kubeflow.org), from the training operator's
-- conditions: the most decisive condition that is True wins, so a job that ran and then
-- failed is Degraded even though its Running condition is still listed.
-- A running job is Progressing, as Argo CD's own batch/v1 Job is: it is not done yet.
-- paddlegen appends conditions.lua, which decides.
local ORDER = {
  {"Failed", "Degraded"}, {"Succeeded", "Healthy"}, {"Suspended", "Suspended"},
  {"Restarting", "Progressing"}, {"Running", "Progressing"}, {"Created", "Progressing"},
}

local WAITING = "Waiting for the training operator to create the job"

-- "Master: 1 active; Worker: 2 active, 1 failed" from status.replicaStatuses.
local function counts(status)
  local statuses = status.replicaStatuses or {}
  local types = {}
  for replicaType, _ in pairs(statuses) do
    table.insert(types, replicaType)
  end
  table.sort(types)
  local out = {}
  for _, replicaType in ipairs(types) do
    local counts = statuses[replicaType]
    local parts = {}
    for _, state in ipairs({"active", "succeeded", "failed"}) do
      local n = counts[state]
      if n ~= nil and n > 0 then
        table.insert(parts, tostring(n) .. " " .. state)
      end
    end
    if #parts > 0 then
      table.insert(out, replicaType .. ": " .. table.concat(parts, ", "))
    end
  end
  return table.concat(out, "; ")
end

