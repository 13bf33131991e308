-- schedule.lua: add (or move) a plan's schedule entry, and announce it when it is now the
-- earliest entry, so every running scheduler re-arms its timer for it.
-- KEYS[1]  the schedule ZSET  executor:schedule
-- ARGV[1]  startAt in Unix milliseconds (the score)
-- ARGV[2]  planId (the member)
-- ARGV[3]  the wake channel  executor:schedule:wake (published with ARGV[1] as the message)
-- returns  1 when the entry is the earliest and the channel was published, 0 otherwise
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[2] then
  redis.call('PUBLISH', ARGV[3], ARGV[1])
  return 1
end
return 0
