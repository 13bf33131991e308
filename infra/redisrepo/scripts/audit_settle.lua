-- audit_settle.lua: store what came of an operator action beside its record, and give the
-- plan's audit keys the plan's TTL as audit_append.lua does.
-- KEYS[1]  the audit stream      executor:audit:{<planId>}
-- KEYS[2]  the outcomes hash     executor:auditout:{<planId>}
-- KEYS[3]  the plan hash         executor:plan:{<planId>}
-- ARGV[1]  the record's id (a ULID)
-- ARGV[2]  the outcome, JSON
-- ARGV[3]  the retention, ms
-- returns  1 stored; 0 the plan's records are gone (expired): nothing written
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[3])
if ttl == -2 then ttl = tonumber(ARGV[3]) end
for i = 1, 2 do
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return 1
