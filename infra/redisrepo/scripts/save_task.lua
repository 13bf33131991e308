-- save_task.lua: one fenced write of a task and, optionally, its checkpoint, refreshing TTLs.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the writer's fence epoch
-- ARGV[2]  TTL in seconds, applied to both keys
-- ARGV[3]  the checkpoint JSON, or "" to keep the stored checkpoint (its TTL is refreshed)
-- ARGV[4]  the task's updatedAt (RFC 3339 UTC, fixed width: later times sort later)
-- ARGV[5…] field, value pairs of the task hash
-- returns  1 written; 0 fenced: the stored epoch is newer, nothing was written; -1 no such
--          task; 2 stale: Redis holds a later write of the same epoch (this one was delayed in
--          the network past its client's timeout and written back since), nothing written
local stored = redis.call('HGET', KEYS[1], 'fence')
if not stored then
  return -1
end
if tonumber(stored) > tonumber(ARGV[1]) then
  return 0
end
if tonumber(stored) == tonumber(ARGV[1]) then
  local updated = redis.call('HGET', KEYS[1], 'updatedAt')
  if updated and updated > ARGV[4] then
    return 2
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
