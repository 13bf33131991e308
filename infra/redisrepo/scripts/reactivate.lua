-- reactivate.lua: a task is about to run again (retry, resume); it must still be its tenant's
-- latest task, and no other task may hold the tenant. The tenant's keys lose any TTL: the
-- task's plan is active again.
-- KEYS[1]  the tenant index          executor:index:tenant:{<tenantId>}
-- KEYS[2]  the tenant active marker  executor:active:tenant:{<tenantId>}
-- ARGV[1]  the task id
-- returns  1 the task holds the tenant; 0 the tenant moved on to another task (nothing written)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('PERSIST', KEYS[1])
return 1
