-- done.lua: a claimed task's run ended: out of the in-flight set; a failure counts toward
-- the failure budget, and a failure at or past the budget empties the queue. A task that is
-- not in flight counts nothing (a repeated done is harmless). Wakes every claimer when it
-- freed a slot of a plan at its maxConcurrency with something queued: below the limit no
-- claimer waits for the plan (each claims again as its own workers free up), and a freed
-- slot with nothing to claim wakes nobody.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  taskId
-- ARGV[2]  1 when the run failed, 0 otherwise
-- ARGV[3]  the wake channel  executor:dispatch:wake
-- ARGV[4]  planId (the wake message)
-- ARGV[5]  optional: an executor's name, to claim the plan's front task for it in the same
--          step (the run that ended hands its worker on) when the plan lets one start now:
--          not paused, not paced (a start rate leaves claims to the dispatch loop), a free
--          slot; the claim is recorded in flight as claim.lua does, and nobody is woken for
--          the slot it takes
-- A task pushed again while in flight (again:<taskId>) is queued at the back.
-- returns  {left, drained, woke, next}: left = queued + in flight after the call; drained =
--          the ids the budget took out of the queue, front first (empty unless it did); woke
--          = 1 when claimers were woken; next = the task claimed for ARGV[5], or ""
local inflight = redis.call('HLEN', KEYS[2])
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then
  return {redis.call('ZCARD', KEYS[1]) + inflight, {}, 0, ''}
end
local m = redis.call('HMGET', KEYS[3], 'limit', 'rate', 'paused', 'budget')
local limit = tonumber(m[1]) or 1
local full = inflight >= limit -- claimers may be waiting for the slot this run frees
inflight = inflight - 1
local drained = {}
if ARGV[2] == '1' then
  local failed = redis.call('HINCRBY', KEYS[3], 'failed', 1)
  local budget = tonumber(m[4]) or 0
  if budget > 0 and failed >= budget then
    drained = redis.call('ZRANGE', KEYS[1], 0, -1)
    redis.call('DEL', KEYS[1])
  end
end
if redis.call('HDEL', KEYS[3], 'again:' .. ARGV[1]) == 1 then
  -- pushed again while in flight: queued now, at the back
  local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
  redis.call('ZADD', KEYS[1], string.format('%d', seq), ARGV[1])
end
local queued = redis.call('ZCARD', KEYS[1])
local nxt = ''
if ARGV[5] and ARGV[5] ~= '' and queued > 0 and inflight < limit
    and (tonumber(m[2]) or 0) == 0 and m[3] ~= '1' then
  local popped = redis.call('ZPOPMIN', KEYS[1], 1)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', KEYS[2], popped[1], ARGV[5] .. '|' .. string.format('%d', now))
  nxt = popped[1]
  queued = queued - 1
  inflight = inflight + 1
end
local woke = 0
if nxt == '' and full and queued > 0 then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
  woke = 1
end
return {queued + inflight, drained, woke, nxt}
