
-- The body paddlegen appends to trainjob.lua and jobset.lua (paddlegen/gitops/argocd.py), after
-- their ORDER, WAITING and JOBS: the first condition of ORDER that is True decides, with its
-- message, so a job that failed is Degraded whatever else is still listed; none decides:
-- Progressing.
local hs = {}
local status = obj.status or {}

-- "node: 1 active, 1 ready" from the replicated jobs' counts of child Jobs.
local function jobs()
  local out = {}
  for _, job in ipairs(status[JOBS] or {}) do
    local parts = {}
    for _, state in ipairs({"active", "ready", "succeeded", "failed", "suspended"}) do
      local n = job[state]
      if n ~= nil and n > 0 then
        table.insert(parts, tostring(n) .. " " .. state)
      end
    end
    if #parts > 0 then
      table.insert(out, tostring(job.name) .. ": " .. table.concat(parts, ", "))
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
hs.message = WAITING
for _, pair in ipairs(ORDER) do
  local condition = current[pair[1]]
  if condition ~= nil then
    hs.status = pair[2]
    hs.message = condition.message or condition.reason or pair[1]
    break
  end
end
local counts = jobs()
if counts ~= "" then
  if hs.message == WAITING then
    hs.message = "Running"
  end
  hs.message = hs.message .. " (" .. counts .. ")"
end
return hs
