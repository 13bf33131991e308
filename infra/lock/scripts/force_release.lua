-- force_release.lua: an operator's unlock. Removes a tenant's lease key whoever holds it,
-- answers what it removed, read in the same atomic step as the delete, and leaves a tombstone
-- holding the removed value, so that the holder's watchdog gives the lease up instead of
-- taking its key back (take_back.lua).
-- KEYS[1]  the tenant's lease key  executor:lock:tenant:{<tenantId>}
-- KEYS[2]  the tenant's tombstone  executor:lock:released:{<tenantId>}
-- ARGV[1]  the tombstone's least expiry in milliseconds; it lives at least 3 times the
--          removed key's PTTL too, since the holder may use a longer lease TTL than ours
-- returns  nil when the key does not exist (no tombstone is written); else {value, pttl}: the
--          value removed (redislock token followed by the owner) and its milliseconds left
--          (-1 for a key without expiry)
local val = redis.call('GET', KEYS[1])
if not val then
  return nil
end
local left = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
local keep = tonumber(ARGV[1])
if left > 0 and 3 * left > keep then
  keep = 3 * left
end
redis.call('SET', KEYS[2], val, 'PX', keep)
return {val, left}
