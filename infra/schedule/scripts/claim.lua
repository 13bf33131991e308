-- claim.lua: take the entries whose time has come, atomically: each one is re-scored to the
-- claim's expiry, a visibility timeout, so no other scheduler takes it meanwhile; an entry
-- that is not acknowledged (ack.lua) by then is due again and claimed anew.
-- KEYS[1]  the schedule ZSET  executor:schedule
-- ARGV[1]  now in Unix milliseconds
-- ARGV[2]  the claim's expiry in Unix milliseconds (now + ClaimTTL)
-- ARGV[3]  the most entries to take
-- returns  the plan ids taken, earliest first (an empty list when none is due)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
end
return ids
