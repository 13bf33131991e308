-- release_tenant.lua: a task ended; the tenant is free for a new task, unless another task
-- holds it already. The tenant's index lives on (its plan's end gives it the retention TTL).
-- KEYS[1]  the tenant's active marker  executor:active:tenant:{<tenantId>}
-- KEYS[2]  the tenant's index          executor:index:tenant:{<tenantId>}
-- ARGV[1]  the task id that ended
-- returns  1 released; 0 the marker names another task (or none): left as it is
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
