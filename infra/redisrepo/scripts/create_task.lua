-- create_task.lua: write a new task, only if it does not exist yet: a creation that reaches
-- Redis late (its reply was lost, and the task ran since) must not reset it.
-- KEYS[1]  the task hash  executor:task:{<taskId>}
-- ARGV[1…] field, value pairs of the task hash (no TTL: its plan is active; the plan's end
--          gives the task its retention)
-- returns  1 created; 0 it existed already (nothing written)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
