-- release.lua: take a task out of a plan's in-flight set without queueing it or counting it
-- (the slot of a run whose executor died); wake every claimer when a slot was freed. A task
-- pushed again while in flight (again:<taskId>) is queued at the back.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  taskId
-- ARGV[2]  the wake channel  executor:dispatch:wake
-- ARGV[3]  planId (the wake message)
-- returns  1 when the task was in flight, 0 otherwise
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  if redis.call('HDEL', KEYS[3], 'again:' .. ARGV[1]) == 1 then
    local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
    redis.call('ZADD', KEYS[1], string.format('%d', seq), ARGV[1])
  end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
