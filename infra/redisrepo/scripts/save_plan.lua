-- save_plan.lua: write a plan's status fields and refresh its TTL, only if the plan exists.
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds
-- ARGV[2…] field, value pairs
-- returns  1 written; 0 no such plan (nothing written)
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
