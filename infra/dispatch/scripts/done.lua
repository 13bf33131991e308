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
-- A task pushed again while in flight (again:<taskId>) is queued at the back.
-- returns  {left, drained, woke}: left = queued + in flight after the call; drained = the ids
--          the budget took out of the queue, front first (empty unless it did); woke = 1
--          when claimers were woken
local drained = {}
local woke = 0
local limit = tonumber(redis.call('HGET', KEYS[3], 'limit') or '1') or 1
local full = redis.call('HLEN', KEYS[2]) >= limit -- claimers may be waiting for this slot
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  if ARGV[2] == '1' then
    local failed = redis.call('HINCRBY', KEYS[3], 'failed', 1)
    local budget = tonumber(redis.call('HGET', KEYS[3], 'budget') or '0') or 0
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
  if full and redis.call('ZCARD', KEYS[1]) > 0 then
    redis.call('PUBLISH', ARGV[3], ARGV[4])
    woke = 1
  end
end
return {redis.call('ZCARD', KEYS[1]) + redis.call('HLEN', KEYS[2]), drained, woke}
