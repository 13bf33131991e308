-- release.lua: take a task out of a plan's in-flight set without queueing it or counting it
-- (the slot of a run whose executor died); wake every claimer when a slot was freed.
-- KEYS[1]  the in-flight HASH  executor:inflight:{<planId>}
-- ARGV[1]  taskId
-- ARGV[2]  the wake channel  executor:dispatch:wake
-- ARGV[3]  planId (the wake message)
-- returns  1 when the task was in flight, 0 otherwise
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
