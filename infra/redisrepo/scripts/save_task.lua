-- save_task.lua: one fenced write of a task and, optionally, its checkpoint, refreshing TTLs.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the writer's fence epoch
-- ARGV[2]  TTL in seconds, applied to both keys
-- ARGV[3]  the checkpoint JSON, or "" to keep the stored checkpoint (its TTL is refreshed)
-- ARGV[4]  the task's updatedAt (RFC 3339 UTC, fixed width: later times sort later)
-- ARGV[5…] field, value pairs of the task hash: all of them, or the ones this run changed
--          since its last write (the writer remembers what it wrote at this epoch)
-- returns  1 written; 0 fenced: the stored epoch is newer, nothing was written; -1 no such
--          task; 2 stale: Redis holds a later write of the same epoch (this one was delayed in
--          the network past its client's timeout and written back since), nothing written
local stored = redis.call('HMGET', KEYS[1], 'fence', 'updatedAt')
if not stored[1] then
  return -1
end
local fence = tonumber(stored[1])
if fence > tonumber(ARGV[1]) then
  return 0
end
if fence == tonumber(ARGV[1]) and stored[2] and stored[2] > ARGV[4] then
  return 2
end
if #ARGV >= 6 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 5))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
