-- claim.lua: take up to n of a plan's front tasks for an executor, within the plan's limits,
-- atomically: nothing while the plan is paused, its queue is empty or limit tasks are in
-- flight; nothing but the wait while the start rate holds the next start back (a paced plan
-- gives one task per claim); otherwise the front tasks, as many as n, the queue and the free
-- slots allow, recorded in flight with the claim time, the pacing advanced. Times are
-- Redis's (TIME), so executors' clocks do not matter.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  the executor's name
-- ARGV[2]  n, the most tasks to take (at least 1)
-- returns  {0, id…} when tasks were claimed; {ms} when the start rate allows the next start
--          in ms milliseconds; {0} when nothing can be claimed
local m = redis.call('HMGET', KEYS[3], 'limit', 'rate', 'paused', 'next')
if m[3] == '1' then
  return {0}
end
local queued = redis.call('ZCARD', KEYS[1])
local free = (tonumber(m[1]) or 1) - redis.call('HLEN', KEYS[2])
local n = math.min(tonumber(ARGV[2]) or 1, queued, free)
if n <= 0 then
  return {0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(m[2]) or 0
if rate > 0 then
  local nxt = tonumber(m[4]) or 0
  if now < nxt then
    return {nxt - now}
  end
  redis.call('HSET', KEYS[3], 'next', string.format('%d', now + math.floor(60000 / rate)))
  n = 1
end
local out = {0}
local popped = redis.call('ZPOPMIN', KEYS[1], n)
local value = ARGV[1] .. '|' .. string.format('%d', now)
for i = 1, #popped, 2 do
  redis.call('HSET', KEYS[2], popped[i], value)
  out[#out + 1] = popped[i]
end
return out
