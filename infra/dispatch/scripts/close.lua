-- close.lua: forget an ended plan's dispatch state, unless work arrived meanwhile (a retry of
-- one of its tasks pushed after the plan was settled): then nothing is deleted.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- returns  1 when the keys were deleted; 0 when the plan has queued or in-flight tasks
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('HLEN', KEYS[2]) > 0 then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
