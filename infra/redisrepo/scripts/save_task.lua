-- save_task.lua: one compare-and-set write of a task and, optionally, its checkpoint. The
-- write is accepted only from a writer at the stored fence epoch (or a newer one) and at the
-- stored version; it advances the version by one. It leaves the keys' TTLs as they are: a task
-- has none while its plan is active, and its plan's end gives it the retention.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the writer's fence epoch
-- ARGV[2]  the checkpoint JSON, or "" to keep the stored checkpoint
-- ARGV[3]  the version the writer read (its copy derives from it)
-- ARGV[4]  this write's token (unique per write): a write repeated after a lost reply finds
--          itself and is not a conflict
-- ARGV[5…] field, value pairs of the task hash: all of them, or the ones this writer changed
--          since the version it knows the fields of
-- returns  1 written (the task is at version ARGV[3]+1); 0 fenced: the stored epoch is
--          newer, nothing written; -1 no such task; 3 conflict: the stored version is not
--          ARGV[3] (another writer changed the task since it was read), nothing written; 5
--          behind: the stored version is lower than ARGV[3], which this writer read or wrote
--          there (versions only grow: Redis lost writes it acknowledged, a failover to a
--          replica that had not received them), nothing written
local stored = redis.call('HMGET', KEYS[1], 'fence', 'version', 'wtoken')
if not stored[1] then
  return -1
end
if tonumber(stored[1]) > tonumber(ARGV[1]) then
  return 0
end
local version = tonumber(stored[2]) or 0
local expected = tonumber(ARGV[3])
if version == expected + 1 and stored[3] == ARGV[4] then
  return 1
end
if version < expected then
  return 5
end
if version ~= expected then
  return 3
end
redis.call('HSET', KEYS[1], 'version', expected + 1, 'wtoken', ARGV[4], unpack(ARGV, 5))
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
end
return 1
