-- take_back.lua: a Failover lease's watchdog takes back its key, found gone, with the same
-- value (a Redis that lost its data), unless an operator's force release removed it
-- (force_release.lua left a tombstone holding exactly that value).
-- KEYS[1]  the tenant's lease key  executor:lock:tenant:{<tenantId>}
-- KEYS[2]  the tenant's tombstone  executor:lock:released:{<tenantId>}
-- ARGV[1]  the lease's value (redislock token followed by the owner)
-- ARGV[2]  the lease TTL in milliseconds
-- returns  "released" when the tombstone holds ARGV[1]: the lease was force-released and is
--          lost; nothing is written. Else "taken" when the key was absent and is now set to
--          ARGV[1] with the TTL, or already held ARGV[1] and got the TTL again; else "held":
--          another value holds the key, which is left alone
if redis.call('GET', KEYS[2]) == ARGV[1] then
  return 'released'
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 'taken'
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'taken'
end
return 'held'
