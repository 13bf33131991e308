-- create_plan.lua: write a plan hash that is not in Redis (a new plan, or one Redis lost), or,
-- when it is there, only its status fields, as a compare-and-set on the version Redis held
-- when this executor began changing the plan on its own (the write-back after an outage). A
-- creation that reaches Redis late changes nothing.
-- KEYS[1]  the plan hash  executor:plan:{<planId>}
-- ARGV[1]  TTL in seconds: the retention of an ended plan; 0 for an active one (no TTL)
-- ARGV[2]  the base version: the version Redis held before this executor's first change while
--          it was away (0 for a plan created meanwhile); -1 for a creation itself
-- ARGV[3]  this executor's own writes, comma-separated: "<prefix>*" and the tokens of its
--          writes whose outcome is unknown (see restore_task.lua): Redis holding one of them
--          holds this executor's own write
-- ARGV[4]  how many of the following pairs are status fields (they come first, the version
--          among them)
-- ARGV[5]  after Redis lost its data, the generation of its data since ("" otherwise): the
--          hash is then marked restored=<generation>, and over a hash so marked for the same
--          generation (another executor's copy written back for this loss) newest wins: the
--          status fields are written only over an older version
-- ARGV[6…] field, value pairs of the whole plan hash, status fields first
-- returns  1 written; 2 already there (nothing written); 3 conflict: another writer changed
--          the plan since the base version, or holds a newer copy written back for the same
--          loss (nothing written)
local function keep(key, ttl) -- a TTL, or none (PERSIST) while the plan is active
  if tonumber(ttl) > 0 then
    redis.call('EXPIRE', key, ttl)
  else
    redis.call('PERSIST', key)
  end
end
local function mark() -- a write-back after a loss marks the hash with the generation
  if ARGV[5] ~= '' then
    redis.call('HSET', KEYS[1], 'restored', ARGV[5])
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 6))
  mark()
  keep(KEYS[1], ARGV[1])
  return 1
end
if ARGV[2] == '-1' then
  return 2
end
local n = tonumber(ARGV[4]) * 2
local stored = redis.call('HMGET', KEYS[1], 'version', 'wtoken', 'restored')
local version = tonumber(stored[1]) or 0
local base = tonumber(ARGV[2])
local ours
for i = 6, 5 + n, 2 do
  if ARGV[i] == 'version' then
    ours = tonumber(ARGV[i + 1])
  end
end
if version == ours then
  return 2
end
if ARGV[5] ~= '' and stored[3] == ARGV[5] then
  if ours and version > ours then
    return 3
  end
  redis.call('HSET', KEYS[1], unpack(ARGV, 6, 5 + n))
  keep(KEYS[1], ARGV[1])
  return 1
end
local doubt = false
if stored[2] and stored[2] ~= '' then
  for entry in string.gmatch(ARGV[3], '[^,]+') do
    if string.sub(entry, -1) == '*' then
      doubt = doubt or string.sub(stored[2], 1, #entry - 1) == string.sub(entry, 1, -2)
    else
      doubt = doubt or entry == stored[2]
    end
  end
end
if version ~= base and not doubt then
  return 3
end
if doubt and ours and version > ours then
  return 2 -- a later write of this executor's own is there (this write-back arrived late)
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6, 5 + n))
mark()
keep(KEYS[1], ARGV[1])
return 1
