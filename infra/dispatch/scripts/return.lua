-- return.lua: hand a claimed task back: out of the in-flight set (its slot freed, not a
-- failure) and into the queue in front of everything queued; wake every claimer. A task that
-- is not in flight is left alone, so a repeated return queues it once.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  taskId
-- ARGV[2]  the wake channel  executor:dispatch:wake
-- ARGV[3]  planId (the wake message)
-- returns  1 when the task was in flight and is queued at the front, 0 otherwise
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[3], 'again:' .. ARGV[1]) -- queued now anyway
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local score
if first[2] then
  score = tonumber(first[2]) - 1
else
  score = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0') or 0
end
redis.call('ZADD', KEYS[1], string.format('%d', score), ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
