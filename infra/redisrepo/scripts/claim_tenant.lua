-- claim_tenant.lua: take a tenant for a new task. Retried after a lost reply, it finds its own
-- claim and still succeeds.
-- KEYS[1]  the tenant's active marker  executor:active:tenant:{<tenantId>}
-- ARGV[1]  the new task's id
-- ARGV[2]  TTL in seconds
-- returns  1 claimed (now or by an earlier try of this claim); 0 another task holds the tenant
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  return 1
end
if holder then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
