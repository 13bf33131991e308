-- bump_fence.lua: a new run took the tenant's lease (or a reader takes over a task whose owner
-- is gone); raise the task's fence epoch so that every write of an older run is refused from
-- now on, and return the task as stored with it, read in the same atomic step. The bump is a
-- write: it advances the version too, and leaves its token as the last write's. A bump retried after a lost reply carries the same
-- token and raises nothing twice: the hash keeps the tokens of its last 8 bumps ('bump',
-- comma-separated, newest first), so a copy of a bump held in the network that lands after
-- later bumps, or after a write-back (restore_task.lua adds its in-doubt token), finds itself
-- done.
-- KEYS[1]  the task hash  executor:task:{<taskId>}
-- ARGV[1]  this bump's token (unique per bump)
-- returns  the task hash as a flat field, value list (HGETALL), or an empty list when there is
--          no such task
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
local done = redis.call('HGET', KEYS[1], 'bump') or ''
for token in string.gmatch(done, '[^,]+') do
  if token == ARGV[1] then
    return redis.call('HGETALL', KEYS[1]) -- this bump landed already (a late or resent copy)
  end
end
local list = {ARGV[1]}
for token in string.gmatch(done, '[^,]+') do
  if #list >= 8 then
    break
  end
  list[#list + 1] = token
end
redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'bump', table.concat(list, ','), 'wtoken', ARGV[1])
return redis.call('HGETALL', KEYS[1])
