-- bump_fence.lua: a new run took the tenant's lease (or a reader takes over a task whose owner
-- is gone); raise the task's fence epoch so that every write of an older run is refused from
-- now on, and return the task as stored with it, read in the same atomic step. The bump is a
-- write: it advances the version too, and leaves its token as the last write's. A bump retried after a lost reply carries the same
-- token and raises nothing twice.
-- KEYS[1]  the task hash  executor:task:{<taskId>}
-- ARGV[1]  this bump's token (unique per bump)
-- returns  the task hash as a flat field, value list (HGETALL), or an empty list when there is
--          no such task
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
if redis.call('HGET', KEYS[1], 'bump') ~= ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'fence', 1)
  redis.call('HINCRBY', KEYS[1], 'version', 1)
  redis.call('HSET', KEYS[1], 'bump', ARGV[1], 'wtoken', ARGV[1])
end
return redis.call('HGETALL', KEYS[1])
