-- retain_index.lua: give a tenant's index the TTL of its task's plan (the retention when the
-- plan ended, none while it is active), if the index still points at that task: a tenant
-- that moved on to a newer plan's task keeps that plan's TTL.
-- KEYS[1]  the tenant index  executor:index:tenant:{<tenantId>}
-- ARGV[1]  the task id
-- ARGV[2]  TTL in seconds; 0 for none (PERSIST)
-- returns  1 done; 0 the index points at another task (or is gone): left as it is
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) > 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
else
  redis.call('PERSIST', KEYS[1])
end
return 1
