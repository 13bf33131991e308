-- save_task.lua: one fenced write of a task and, optionally, its checkpoint, refreshing TTLs.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the writer's fence epoch
-- ARGV[2]  TTL in seconds, applied to both keys
-- ARGV[3]  the checkpoint JSON, or "" to keep the stored checkpoint (its TTL is refreshed)
-- ARGV[4…] field, value pairs of the task hash
-- returns  1 written; 0 fenced: the stored epoch is newer, nothing was written; -1 no such task
local stored = redis.call('HGET', KEYS[1], 'fence')
if not stored then
  return -1
end
if tonumber(stored) > tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
