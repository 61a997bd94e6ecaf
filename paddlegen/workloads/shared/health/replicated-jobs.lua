
-- counts(status) for trainjob.lua and jobset.lua, before conditions.lua: "node: 1 active,
-- 1 ready" from the replicated jobs' counts of child Jobs (the list status[JOBS]), after a
-- JobSet's restarts of its group so far, "restarts: 1" (status.restarts, jobset v0.12.0
-- pkg/controllers/failure_policy.go:186-205), when it has restarted.
local function counts(status)
  local out = {}
  if status.restarts ~= nil and status.restarts > 0 then
    table.insert(out, "restarts: " .. tostring(status.restarts))
  end
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
