-- drain.lua: empty a plan's queue.
-- KEYS[1]  the queue ZSET  executor:queue:{<planId>}
-- returns  the ids it held, front first
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return ids
