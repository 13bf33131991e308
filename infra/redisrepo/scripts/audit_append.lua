-- audit_append.lua: store the record of an operator action before the action takes effect,
-- keeping at most ARGV[3] records of the plan (the oldest go, with their outcomes), and give
-- the plan's audit keys the plan's TTL: none while it is active, what is left of its
-- retention once it ended, the retention (ARGV[4]) when there is no plan hash (the records of
-- no plan; a submission's, written before its plan: the outcome's write persists them).
-- KEYS[1]  the audit stream      executor:audit:{<planId>}
-- KEYS[2]  the outcomes hash     executor:auditout:{<planId>}
-- KEYS[3]  the plan hash         executor:plan:{<planId>}
-- ARGV[1]  the record's id (a ULID)
-- ARGV[2]  the record, JSON
-- ARGV[3]  how many records the plan keeps at most
-- ARGV[4]  the retention, ms
-- returns  the stream entry's id
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then
  for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)) do
    local f = e[2]
    for i = 1, #f, 2 do
      if f[i] == 'id' then redis.call('HDEL', KEYS[2], f[i + 1]) end
    end
    redis.call('XDEL', KEYS[1], e[1])
  end
end
local id = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'r', ARGV[2])
local ttl = redis.call('PTTL', KEYS[3])
if ttl == -2 then ttl = tonumber(ARGV[4]) end
for i = 1, 2 do
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return id
