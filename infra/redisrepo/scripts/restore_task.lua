-- restore_task.lua: write back a task (and its checkpoint) that changed while Redis was away,
-- as its full latest state: create it if Redis lost it, update it unless a newer run took it.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the task's fence epoch
-- ARGV[2]  TTL in seconds
-- ARGV[3]  the checkpoint JSON, or "" when the task has none
-- ARGV[4]  the task's updatedAt (RFC 3339 UTC, so later times sort later)
-- ARGV[5…] field, value pairs of the whole task hash (fence included)
-- returns  1 written; 0 fenced: Redis holds a newer epoch (another executor took the task),
--          nothing written; 2 Redis holds a later write at the same epoch (another executor
--          wrote it back already): nothing written, not a conflict
local stored = redis.call('HGET', KEYS[1], 'fence')
if stored and tonumber(stored) > tonumber(ARGV[1]) then
  return 0
end
if stored and tonumber(stored) == tonumber(ARGV[1]) then
  local updated = redis.call('HGET', KEYS[1], 'updatedAt')
  if updated and updated > ARGV[4] then
    return 2
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
end
return 1
