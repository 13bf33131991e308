-- restore_tenant.lua: after a task was written back, point its tenant at it again: the index,
-- and the active claim while the task has not ended, unless another task holds the tenant
-- (another executor gave the tenant a new task while this one could not reach Redis).
-- KEYS[1]  the tenant index          executor:index:tenant:{<tenantId>}
-- KEYS[2]  the tenant active marker  executor:active:tenant:{<tenantId>}
-- ARGV[1]  the task id
-- ARGV[2]  TTL in seconds of the index: the retention when the task's plan has ended, 0 (no
--          TTL) while it is active
-- ARGV[3]  "1" when the task has ended, else "0"
-- returns  1 done; 0 another task holds the tenant (nothing written)
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return 0
end
local latest = redis.call('GET', KEYS[1])
if latest and latest > ARGV[1] then
  return 1 -- the tenant has a newer task already (ULIDs sort by creation): leave it
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
if ARGV[3] == '1' then
  if holder then
    redis.call('DEL', KEYS[2])
  end
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
