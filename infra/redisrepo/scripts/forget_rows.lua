-- forget_rows.lua: drop the rows of some of a plan's tasks from the plan's index (tasks the
-- store no longer holds: a reader found the task hash gone), with their counts, in one step:
-- the counters always sum the rows. A task without a row changes nothing.
-- KEYS[1]  the rows hash       executor:planrows:{<planId>}
-- KEYS[2]  the counters hash   executor:plancounts:{<planId>}
-- KEYS[3]  the RUNNING set     executor:planrunning:{<planId>}
-- ARGV[1…] task ids
-- returns  how many rows were dropped
local function count(v)
  local parts, start = {}, 1
  for _ = 1, 5 do
    local i = string.find(v, '|', start, true)
    parts[#parts + 1] = string.sub(v, start, i - 1)
    start = i + 1
  end
  local status, stage, class = parts[3], parts[4], parts[5]
  redis.call('HINCRBY', KEYS[2], 'total', -1)
  redis.call('HINCRBY', KEYS[2], 's:' .. status, -1)
  redis.call('HINCRBY', KEYS[2], 'm:' .. stage .. ':' .. status, -1)
  if class ~= '' then
    redis.call('HINCRBY', KEYS[2], 'c:' .. class, -1)
  end
end
local dropped = 0
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    count(v)
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('ZREM', KEYS[3], ARGV[i])
    dropped = dropped + 1
  end
end
return dropped
