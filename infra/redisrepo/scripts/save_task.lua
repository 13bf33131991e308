-- save_task.lua: one compare-and-set write of a task and, optionally, its checkpoint,
-- refreshing TTLs. The write is accepted only from a writer at the stored fence epoch (or a
-- newer one) and at the stored version; it advances the version by one.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the writer's fence epoch
-- ARGV[2]  TTL in seconds: the checkpoint's, and the task hash's when ARGV[6] is 1
-- ARGV[3]  the checkpoint JSON, or "" to keep the stored checkpoint (its TTL is refreshed)
-- ARGV[4]  the version the writer read (its copy derives from it)
-- ARGV[5]  this write's token (unique per write): a write repeated after a lost reply finds
--          itself and is not a conflict
-- ARGV[6]  1 to refresh the task hash's TTL, 0 to leave it (a running task's stage
--          checkpoint: its start and heartbeats refresh it)
-- ARGV[7…] field, value pairs of the task hash: all of them, or the ones this writer changed
--          since the version it knows the fields of
-- returns  1 written (the task is at version ARGV[4]+1); 0 fenced: the stored epoch is
--          newer, nothing written; -1 no such task; 3 conflict: the stored version is not
--          ARGV[4] (another writer changed the task since it was read), nothing written
local stored = redis.call('HMGET', KEYS[1], 'fence', 'version', 'wtoken')
if not stored[1] then
  return -1
end
if tonumber(stored[1]) > tonumber(ARGV[1]) then
  return 0
end
local version = tonumber(stored[2]) or 0
local expected = tonumber(ARGV[4])
if version == expected + 1 and stored[3] == ARGV[5] then
  return 1
end
if version ~= expected then
  return 3
end
redis.call('HSET', KEYS[1], 'version', expected + 1, 'wtoken', ARGV[5], unpack(ARGV, 7))
if ARGV[6] == '1' then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
