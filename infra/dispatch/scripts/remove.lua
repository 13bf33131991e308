-- remove.lua: take task ids out of a plan's queue (queued tasks cancelled).
-- KEYS[1]  the queue ZSET  executor:queue:{<planId>}
-- ARGV[…]  the task ids
-- returns  the ids that were queued, in ARGV's order
local removed = {}
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    removed[#removed + 1] = ARGV[i]
  end
end
return removed
