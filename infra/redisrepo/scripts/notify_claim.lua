-- notify_claim.lua: claim one delivery of a plan's notification for an executor, unless it
-- is done or another executor's claim still runs; the plan's notify hash takes the plan's TTL.
-- KEYS[1]  the notify hash   executor:notify:{<planId>}
-- KEYS[2]  the plan hash     executor:plan:{<planId>}
-- ARGV[1]  the delivery, "<noticeId>/<destination>"
-- ARGV[2]  the claiming executor
-- ARGV[3]  now, Unix ms (the claimer's clock)
-- ARGV[4]  the claim's end, Unix ms
-- ARGV[5]  the retention, ms (when the plan hash is gone)
-- returns  {1, state} claimed; {0, state} not (done, or claimed by another); state is the
--          stored state JSON ("" when never tried)
local k = ARGV[1]
local state = redis.call('HGET', KEYS[1], 's:' .. k) or ''
if redis.call('HEXISTS', KEYS[1], 'd:' .. k) == 1 then
  return {0, state}
end
local claim = redis.call('HGET', KEYS[1], 'c:' .. k)
if claim then
  local owner, untilMs = string.match(claim, '^(.*)|(%d+)$')
  if owner ~= ARGV[2] and tonumber(untilMs or '0') > tonumber(ARGV[3]) then
    return {0, state}
  end
end
redis.call('HSET', KEYS[1], 'c:' .. k, ARGV[2] .. '|' .. ARGV[4])
local ttl = redis.call('PTTL', KEYS[2])
if ttl == -2 then ttl = tonumber(ARGV[5]) end
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
return {1, state}
