-- bump_fence.lua: a new run took the tenant's lease (or a reader takes over a task whose owner
-- is gone); raise the task's fence epoch so that every write of an older run is refused from
-- now on, and return the task as stored with it, read in the same atomic step.
-- KEYS[1]  the task hash  executor:task:{<taskId>}
-- ARGV[1]  TTL in seconds
-- returns  the task hash as a flat field, value list (HGETALL), or an empty list when there is
--          no such task
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return redis.call('HGETALL', KEYS[1])
