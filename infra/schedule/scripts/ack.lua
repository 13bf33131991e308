-- ack.lua: acknowledge a claimed entry once its plan is started: remove it, unless it changed
-- since the claim (re-scheduled, or claimed again after its claim expired), which then
-- stays for its new time or its new claimer.
-- KEYS[1]  the schedule ZSET  executor:schedule
-- ARGV[1]  planId (the member)
-- ARGV[2]  the claim's expiry in Unix milliseconds, as given to claim.lua
-- returns  1 when the entry was removed, 0 otherwise
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
