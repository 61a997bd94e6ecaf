
-- The body paddlegen appends to each condition-driven health check (TrainingObject.health,
-- paddlegen/workloads/objects.py), after the kind's ORDER, WAITING and counts(status), and
-- optionally ANY_STATUS (the types that count whatever their status): the first condition of
-- ORDER that is True decides, with its message, so a job that failed is Degraded whatever else
-- is still listed; none decides: Progressing.
local hs = {}
local status = obj.status or {}

local current = {}
local any_status = ANY_STATUS or {}
for _, condition in ipairs(status.conditions or {}) do
  if condition.status == "True" or any_status[condition.type] then
    current[condition.type] = condition
  end
end

hs.status = "Progressing"
hs.message = WAITING
for _, pair in ipairs(ORDER) do
  local condition = current[pair[1]]
  if condition ~= nil then
    hs.status = pair[2]
    hs.message = condition.message or condition.reason or pair[1]
    break
  end
end
local found = counts(status)
if found ~= "" then
  if hs.message == WAITING then
    hs.message = "Running"
  end
  hs.message = hs.message .. " (" .. found .. ")"
end
return hs
