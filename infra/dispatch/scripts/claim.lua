-- claim.lua: take a plan's front task for an executor, within the plan's limits, atomically:
-- nothing while the plan is paused, its queue is empty or limit tasks are in flight; nothing
-- but the wait while the start rate holds the next start back; otherwise the front task,
-- recorded in flight with the claim time, the pacing advanced. Times are Redis's (TIME), so
-- executors' clocks do not matter.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  the executor's name
-- returns  {taskId, 0} when a task was claimed; {'', ms} when the start rate allows the
--          next start in ms milliseconds; {'', 0} when nothing can be claimed
local m = redis.call('HMGET', KEYS[3], 'limit', 'rate', 'paused', 'next')
if m[3] == '1' or redis.call('ZCARD', KEYS[1]) == 0 then
  return {'', 0}
end
if redis.call('HLEN', KEYS[2]) >= (tonumber(m[1]) or 1) then
  return {'', 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(m[2]) or 0
if rate > 0 then
  local nxt = tonumber(m[4]) or 0
  if now < nxt then
    return {'', nxt - now}
  end
  redis.call('HSET', KEYS[3], 'next', string.format('%d', now + math.floor(60000 / rate)))
end
local id = redis.call('ZPOPMIN', KEYS[1])[1]
redis.call('HSET', KEYS[2], id, ARGV[1] .. '|' .. string.format('%d', now))
return {id, 0}
