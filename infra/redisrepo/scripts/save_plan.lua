-- save_plan.lua: a compare-and-set write of a plan's status fields, refreshing its TTL: only
-- if the plan exists and is still at the version the writer read; it advances the version.
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds
-- ARGV[2]  the version the writer read
-- ARGV[3]  this write's token (unique per write): a write repeated after a lost reply finds
--          itself and is not a conflict
-- ARGV[4…] field, value pairs (the status fields)
-- returns  1 written (the plan is at version ARGV[2]+1); 0 no such plan (nothing written);
--          3 conflict: the stored version is not ARGV[2] (nothing written)
local stored = redis.call('HMGET', KEYS[1], 'planId', 'version', 'wtoken')
if not stored[1] then
  return 0
end
local version = tonumber(stored[2]) or 0
local expected = tonumber(ARGV[2])
if version == expected + 1 and stored[3] == ARGV[3] then
  return 1
end
if version ~= expected then
  return 3
end
redis.call('HSET', KEYS[1], 'version', expected + 1, 'wtoken', ARGV[3], unpack(ARGV, 4))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
