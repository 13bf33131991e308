-- take_back.lua: a Failover lease's watchdog takes back its key, found gone, with the same
-- value (a Redis that lost its data), unless an operator's force release removed it
-- (force_release.lua left a tombstone holding exactly that value), or the tenant has moved on
-- to another task (its active marker names another task: a new plan claimed the tenant after
-- Redis lost the lease; that task's run must have the tenant, not this one).
-- KEYS[1]  the tenant's lease key      executor:lock:tenant:{<tenantId>}
-- KEYS[2]  the tenant's tombstone      executor:lock:released:{<tenantId>}
-- KEYS[3]  the tenant's active marker  executor:active:tenant:{<tenantId>}
-- ARGV[1]  the lease's value (redislock token followed by the owner)
-- ARGV[2]  the lease TTL in milliseconds
-- ARGV[3]  the task id of the lease's run ("" when the owner names none: the marker is not
--          looked at)
-- returns  "released" when the tombstone holds ARGV[1]: the lease was force-released and is
--          lost; nothing is written. Else "taken" when the key was absent and is now set to
--          ARGV[1] with the TTL, or already held ARGV[1] and got the TTL again; "moved" when
--          the key is absent and another task holds the tenant (nothing written: the lease is
--          lost); else "held": another value holds the key, which is left alone
if redis.call('GET', KEYS[2]) == ARGV[1] then
  return 'released'
end
if ARGV[3] ~= '' then
  local active = redis.call('GET', KEYS[3])
  if active and active ~= ARGV[3] and not redis.call('GET', KEYS[1]) then
    return 'moved'
  end
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 'taken'
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'taken'
end
return 'held'
