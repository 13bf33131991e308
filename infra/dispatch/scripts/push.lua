-- push.lua: append task ids at the back of a plan's queue, in order, leaving out those queued
-- or in flight already; store the plan's limits; wake every claimer.
-- KEYS[1]  the queue ZSET      executor:queue:{<planId>}
-- KEYS[2]  the in-flight HASH  executor:inflight:{<planId>}
-- KEYS[3]  the dispatch HASH   executor:dispatch:{<planId>}
-- ARGV[1]  maxConcurrency (stored as limit)
-- ARGV[2]  startRate, starts per minute, 0: none (stored as rate)
-- ARGV[3]  failureBudget, 0: none (stored as budget)
-- ARGV[4]  the wake channel  executor:dispatch:wake
-- ARGV[5]  planId (the wake message)
-- ARGV[6…] the task ids, front first
-- An id in flight is marked (field again:<id> of the dispatch HASH) to be queued when its
-- claim ends.
-- returns  how many ids were queued
redis.call('HSET', KEYS[3], 'limit', ARGV[1], 'rate', ARGV[2], 'budget', ARGV[3])
local seq = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0') or 0
local added = 0
for i = 6, #ARGV do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[2], id) == 1 then
    -- Pushed again while its claim has not ended (a retry of a run still winding down):
    -- it is queued when the claim ends (done.lua, release.lua).
    redis.call('HSET', KEYS[3], 'again:' .. id, '1')
  elseif not redis.call('ZSCORE', KEYS[1], id) then
    seq = seq + 1
    redis.call('ZADD', KEYS[1], string.format('%d', seq), id)
    added = added + 1
  end
end
redis.call('HSET', KEYS[3], 'seq', string.format('%d', seq))
redis.call('PUBLISH', ARGV[4], ARGV[5])
return added
