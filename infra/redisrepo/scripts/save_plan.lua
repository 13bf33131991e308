-- save_plan.lua: write a plan's status fields and refresh its TTL, only if the plan exists and
-- Redis does not hold a later change already (a save that reached Redis late changes nothing).
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds
-- ARGV[2]  this change's updatedAt (RFC 3339 UTC, fixed width: later times sort later)
-- ARGV[3…] field, value pairs (updatedAt included)
-- returns  1 written; 0 no such plan (nothing written); 2 stale (nothing written)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local updated = redis.call('HGET', KEYS[1], 'updatedAt')
if updated and updated > ARGV[2] then
  return 2
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
