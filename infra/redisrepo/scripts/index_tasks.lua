-- index_tasks.lua: record the rows of some of a plan's tasks in the plan's index, each only
-- over an older row of its task (a lower fence epoch, or the same epoch at a lower version):
-- a write that reaches the index late, twice, or after a newer one changes nothing. The
-- counters are changed with the rows, in the same step: they always sum the rows. A row with
-- the same status at the same stage keeps the time its task entered them. Nothing is indexed
-- for a plan whose hash is gone (expired); the index keys take the plan hash's TTL.
-- KEYS[1]  the rows hash       executor:planrows:{<planId>}     task id → row
--          (fence|version|status|stage|class|sinceMs|tenant|message)
-- KEYS[2]  the counters hash   executor:plancounts:{<planId>}   total, s:<status>,
--          m:<stage>:<status>, c:<class> (counts), x:<class> (the sample: tenant|message)
-- KEYS[3]  the RUNNING set     executor:planrunning:{<planId>}  task id by sinceMs
-- KEYS[4]  the plan hash       executor:plan:{<planId>}
-- ARGV[1…] 9 values per row: task id, fence, version, status, stage, class, sinceMs, tenant,
--          message
-- returns  how many rows were written
local ttl = redis.call('PTTL', KEYS[4])
if ttl == -2 then
  return 0
end
local function parse(v)
  local parts, start = {}, 1
  for _ = 1, 7 do
    local i = string.find(v, '|', start, true)
    parts[#parts + 1] = string.sub(v, start, i - 1)
    start = i + 1
  end
  parts[8] = string.sub(v, start)
  return {fence = tonumber(parts[1]), version = tonumber(parts[2]), status = parts[3], stage = parts[4],
    class = parts[5], since = parts[6], tenant = parts[7], message = parts[8]}
end
-- The counters' changes are summed over the rows and applied once each at the end: a task
-- that moved from one stage to the next changes total and s:RUNNING by nothing.
local delta, changed = {}, {}
local function add(field, n)
  if delta[field] == nil then
    changed[#changed + 1] = field
    delta[field] = 0
  end
  delta[field] = delta[field] + n
end
local function count(r, n)
  add('total', n)
  add('s:' .. r.status, n)
  add('m:' .. r.stage .. ':' .. r.status, n)
  if r.class ~= '' then
    add('c:' .. r.class, n)
    if n > 0 then
      redis.call('HSET', KEYS[2], 'x:' .. r.class, r.tenant .. '|' .. r.message)
    end
  end
end
local written = 0
for i = 1, #ARGV, 9 do
  local id = ARGV[i]
  local r = {fence = tonumber(ARGV[i + 1]), version = tonumber(ARGV[i + 2]), status = ARGV[i + 3],
    stage = ARGV[i + 4], class = ARGV[i + 5], since = ARGV[i + 6], tenant = ARGV[i + 7], message = ARGV[i + 8]}
  local oldv = redis.call('HGET', KEYS[1], id)
  local newer = true
  if oldv then
    local old = parse(oldv)
    newer = r.fence > old.fence or (r.fence == old.fence and r.version > old.version)
    if newer then
      if old.status == r.status and old.stage == r.stage then
        r.since = old.since
      end
      count(old, -1)
    end
  end
  if newer then
    count(r, 1)
    redis.call('HSET', KEYS[1], id, r.fence .. '|' .. r.version .. '|' .. r.status .. '|' .. r.stage .. '|' ..
      r.class .. '|' .. r.since .. '|' .. r.tenant .. '|' .. r.message)
    if r.status == 'RUNNING' then
      redis.call('ZADD', KEYS[3], tonumber(r.since), id)
    else
      redis.call('ZREM', KEYS[3], id)
    end
    written = written + 1
  end
end
for _, field in ipairs(changed) do
  if delta[field] ~= 0 then
    redis.call('HINCRBY', KEYS[2], field, delta[field])
  end
end
if written > 0 and ttl > 0 then
  for k = 1, 3 do
    redis.call('PEXPIRE', KEYS[k], ttl)
  end
end
return written
