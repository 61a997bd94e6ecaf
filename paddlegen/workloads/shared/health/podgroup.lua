-- Argo CD health of a Volcano PodGroup (scheduling.volcano.sh).
-- paddlegen puts the PodGroup in sync wave 1 and the pods that join it come with the training
-- object in wave 3, and Argo CD does not start a wave until everything before it is Healthy or
-- Degraded. A PodGroup waiting for its pods (no status yet, Pending, Inqueue) must therefore be
-- Healthy, or the sync would wait forever; the training object beside it shows the progress.
-- Only a broken gang (phase Unknown: some members run, the rest cannot be scheduled) is Degraded.
local hs = {}
local status = obj.status or {}
local phase = status.phase or ""
local spec = obj.spec or {}
local minMember = tostring(spec.minMember or 1)

-- The message of a True Unschedulable condition, the scheduler's reason for waiting.
local function unschedulable()
  for _, condition in ipairs(status.conditions or {}) do
    if condition.type == "Unschedulable" and condition.status == "True" then
      return condition.message or condition.reason
    end
  end
  return nil
end

local function pods()
  local parts = {}
  for _, state in ipairs({"running", "succeeded", "failed"}) do
    local n = status[state]
    if n ~= nil and n > 0 then
      table.insert(parts, tostring(n) .. " " .. state)
    end
  end
  if #parts == 0 then
    return "no pods yet"
  end
  return table.concat(parts, ", ")
end

hs.status = "Healthy"
if phase == "" then
  hs.message = "Waiting for the Volcano scheduler to pick up the gang of " .. minMember
elseif phase == "Pending" then
  hs.message = "Pending: waiting for the gang of " .. minMember .. " pods (" .. pods() .. ")"
elseif phase == "Inqueue" then
  hs.message = "Inqueue: admitted to queue " .. (spec.queue or "default") ..
    ", waiting for the gang of " .. minMember .. " pods (" .. pods() .. ")"
elseif phase == "Running" then
  hs.message = "Running: " .. pods() .. " (minMember " .. minMember .. ")"
elseif phase == "Completed" then
  hs.message = "Completed: " .. pods()
elseif phase == "Unknown" then
  hs.status = "Degraded"
  hs.message = "Unknown: part of the gang of " .. minMember ..
    " runs and the rest cannot be scheduled (" .. pods() .. ")"
else
  hs.message = "Phase " .. phase .. " is not known to this health check"
end
local reason = unschedulable()
if reason ~= nil and phase ~= "Running" and phase ~= "Completed" then
  hs.message = hs.message .. ": " .. reason
end
return hs
