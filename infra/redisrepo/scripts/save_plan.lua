-- save_plan.lua: a compare-and-set write of a plan's status fields: only if the plan exists
-- and is still at the version the writer read; it advances the version. An ended plan gets
-- the retention TTL, an active one none.
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds: the retention when the plan has ended, 0 (no TTL) when it is active
-- ARGV[2]  the version the writer read
-- ARGV[3]  this write's token (unique per write): a write repeated after a lost reply finds
--          itself and is not a conflict
-- ARGV[4…] field, value pairs (the status fields)
-- returns  1 written (the plan is at version ARGV[2]+1); 4 written, and the plan had ended
--          (it had a TTL) and is active again: its tasks' keys must lose their TTLs too; 0 no
--          such plan (nothing written); 3 conflict: the stored version is not ARGV[2]
--          (nothing written); 5 behind: the stored version is lower than ARGV[2] (Redis lost
--          writes it acknowledged; nothing written)
local stored = redis.call('HMGET', KEYS[1], 'planId', 'version', 'wtoken')
if not stored[1] then
  return 0
end
local version = tonumber(stored[2]) or 0
local expected = tonumber(ARGV[2])
if version == expected + 1 and stored[3] == ARGV[3] then
  return 1
end
if version < expected then
  return 5
end
if version ~= expected then
  return 3
end
redis.call('HSET', KEYS[1], 'version', expected + 1, 'wtoken', ARGV[3], unpack(ARGV, 4))
if tonumber(ARGV[1]) > 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 1
end
if redis.call('PERSIST', KEYS[1]) == 1 then
  return 4
end
return 1
