-- create_plan.lua: write a plan hash that is not in Redis (a new plan, or one Redis lost), or,
-- when it is there, only its status fields and only if this change is not older than Redis's
-- (the write-back after an outage; a creation that reaches Redis late changes nothing).
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds
-- ARGV[2]  this change's updatedAt (RFC 3339 UTC, fixed width)
-- ARGV[3]  how many of the following pairs are status fields (they come first)
-- ARGV[4…] field, value pairs of the whole plan hash, status fields first
-- returns  1 written; 2 stale or already there (nothing written)
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4))
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 1
end
local updated = redis.call('HGET', KEYS[1], 'updatedAt')
if updated and updated >= ARGV[2] then
  return 2
end
local n = tonumber(ARGV[3]) * 2
redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + n))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
