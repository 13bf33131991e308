-- create_task.lua: write a new task, only if it does not exist yet: a creation that reaches
-- Redis late (its reply was lost, and the task ran since) must not reset it.
-- KEYS[1]  the task hash  executor:task:{<taskId>}
-- ARGV[1]  TTL in seconds
-- ARGV[2…] field, value pairs of the task hash
-- returns  1 created; 0 it existed already (nothing written)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
