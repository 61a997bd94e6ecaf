-- Argo CD health of a Kubeflow PaddleJob (kubeflow.org), from the training operator's
-- conditions: the most decisive condition that is True wins, so a job that ran and then
-- failed is Degraded even though its Running condition is still listed.
-- A running job is Progressing, as Argo CD's own batch/v1 Job is: it is not done yet.
local hs = {}
local status = obj.status or {}

local ORDER = {
  {"Failed", "Degraded"}, {"Succeeded", "Healthy"}, {"Suspended", "Suspended"},
  {"Restarting", "Progressing"}, {"Running", "Progressing"}, {"Created", "Progressing"},
}

-- "Master: 1 active; Worker: 2 active, 1 failed" from status.replicaStatuses.
local function replicas()
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

local current = {}
for _, condition in ipairs(status.conditions or {}) do
  if condition.status == "True" then
    current[condition.type] = condition
  end
end

hs.status = "Progressing"
hs.message = "Waiting for the training operator to create the job"
for _, pair in ipairs(ORDER) do
  local condition = current[pair[1]]
  if condition ~= nil then
    hs.status = pair[2]
    hs.message = condition.message or condition.reason or pair[1]
    break
  end
end
local counts = replicas()
if counts ~= "" then
  hs.message = hs.message .. " (" .. counts .. ")"
end
return hs
