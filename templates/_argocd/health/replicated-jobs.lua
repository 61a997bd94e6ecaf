
-- counts(status) for trainjob.lua and jobset.lua, before conditions.lua: "node: 1 active,
-- 1 ready" from the replicated jobs' counts of child Jobs (the list status[JOBS]).
local function counts(status)
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
