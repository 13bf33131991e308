-- restore_tenant.lua: after a task was written back, point its tenant at it again: the index,
-- and the active claim while the task has not ended, unless another task holds the tenant
-- (another executor gave the tenant a new task while this one could not reach Redis).
-- KEYS[1]  the tenant index          executor:index:tenant:{<tenantId>}
-- KEYS[2]  the tenant active marker  executor:active:tenant:{<tenantId>}
-- ARGV[1]  the task id
-- ARGV[2]  TTL in seconds of the index: the retention when the task's plan has ended, 0 (no
--          TTL) while it is active
-- ARGV[3]  "1" when the task has ended, else "0"
-- ARGV[4]  "1" when Redis lost its data (the write-back of everything, newest wins), else "0":
--          a tenant's tasks follow one another (a task is created only once the one before
--          ended), so of two tasks claiming the tenant the newer one (ULIDs sort by creation)
--          holds it, and a task that has not ended whose tenant names a newer task is a stale
--          copy
-- returns  1 done; 0 another task holds the tenant (nothing written)
local function index() -- the tenant's index names this task (with the TTL of ARGV[2])
  if tonumber(ARGV[2]) > 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  else
    redis.call('SET', KEYS[1], ARGV[1])
  end
end
local holder = redis.call('GET', KEYS[2])
local latest = redis.call('GET', KEYS[1])
local lost = ARGV[4] == '1'
if ARGV[3] == '1' then
  -- An ended task frees the tenant if it holds it, and is the index's entry unless a newer
  -- task is.
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[2])
  end
  if latest and latest > ARGV[1] then
    return 1
  end
  index()
  return 1
end
if holder and holder ~= ARGV[1] and not (lost and holder < ARGV[1]) then
  return 0
end
if latest and latest > ARGV[1] then
  if lost then
    return 0 -- the tenant has a newer task: this copy is stale
  end
  return 1 -- the tenant has a newer task already (ULIDs sort by creation): leave it
end
index()
redis.call('SET', KEYS[2], ARGV[1])
return 1
