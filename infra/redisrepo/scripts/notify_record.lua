-- notify_record.lua: store how an attempt to deliver a plan's notification went, releasing
-- the executor's claim; a claim another executor took meanwhile (this one's ran out) is kept,
-- and so is that executor's state to come.
-- KEYS[1]  the notify hash   executor:notify:{<planId>}
-- ARGV[1]  the delivery, "<noticeId>/<destination>"
-- ARGV[2]  the executor that made the attempt
-- ARGV[3]  the state JSON
-- ARGV[4]  1: the delivery is done (delivered, or given up)
-- returns  1 stored; 0 another executor holds the claim: nothing written
local k = ARGV[1]
local claim = redis.call('HGET', KEYS[1], 'c:' .. k)
if claim then
  local owner = string.match(claim, '^(.*)|%d+$')
  if owner ~= ARGV[2] then
    return 0
  end
end
redis.call('HSET', KEYS[1], 's:' .. k, ARGV[3])
redis.call('HDEL', KEYS[1], 'c:' .. k)
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'd:' .. k, '1')
end
return 1
