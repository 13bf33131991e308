-- keep_transcript.lua: keep what one stage attempt printed beside the task, with the task's
-- TTL (none while its plan is active, the retention once it ended), and at most ARGV[3] of
-- them per task: beyond, the attempts that ran first (by run, then stage, then attempt) go.
-- KEYS[1]  the transcripts hash  executor:out:{<taskId>}
-- KEYS[2]  the task hash         executor:task:{<taskId>}
-- ARGV[1]  the attempt's field, "<stageIndex>:<run>:<attempt>"
-- ARGV[2]  the transcript, {"stdout":…,"stderr":…}
-- ARGV[3]  how many transcripts the task keeps at most
-- returns  1 kept; 0 no such task (expired, or Redis lost it): nothing written
local ttl = redis.call('PTTL', KEYS[2])
if ttl == -2 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local over = redis.call('HLEN', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  local order = {}
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    local stage, run, attempt = string.match(f, '^(%d+):(%d+):(%d+)$')
    order[#order + 1] = {f, tonumber(run or 0), tonumber(stage or 0), tonumber(attempt or 0)}
  end
  table.sort(order, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    if a[3] ~= b[3] then return a[3] < b[3] end
    return a[4] < b[4]
  end)
  for i = 1, over do
    redis.call('HDEL', KEYS[1], order[i][1])
  end
end
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('PERSIST', KEYS[1])
end
return 1
