-- pause.lua: pause a plan's dispatch (claim.lua takes nothing) or resume it; wake every
-- claimer on resume.
-- KEYS[1]  the dispatch HASH  executor:dispatch:{<planId>}
-- ARGV[1]  1 to pause, 0 to resume
-- ARGV[2]  the wake channel  executor:dispatch:wake
-- ARGV[3]  planId (the wake message)
-- returns  1
redis.call('HSET', KEYS[1], 'paused', ARGV[1])
if ARGV[1] == '0' then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
