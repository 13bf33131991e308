-- generation.lua: check that Redis still holds the data an executor saw, and whether new
-- tenant claims may be made now. The generation hash is made when missing: by an executor
-- that is starting (it saw nothing before) claims may be made at once; by one that saw a
-- generation before, Redis lost its data (restarted empty, flushed, failed over to an empty
-- replica) and claims wait quarantine ms, so that the executors that ran tenants meanwhile
-- take their leases back and write their state back first. An executor that finds another
-- generation than the one it saw makes sure claims wait quarantine ms from its start.
-- KEYS[1]  the generation HASH  executor:generation
-- ARGV[1]  the generation token this executor saw last, "" when none
-- ARGV[2]  a new token, for a hash made now
-- ARGV[3]  quarantine, ms (the lease TTL)
-- ARGV[4]  "1" to renew the generation: Redis lost part of its data without losing the hash
--          (a failover to a replica that lacked acknowledged writes): when the hash still holds
--          the token this executor saw, a new token (ARGV[2]) from now, claims waiting
--          quarantine ms, so that every executor learns of the loss and writes back
-- returns  {token, wait ms before claims may be made (0: now), 1 when this call found the
--          generation changed or gone (Redis lost data since the executor saw it), else 0}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local quarantine = tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'token', 'since', 'claimsFrom')
if not h[1] then
  local from = now
  local lost = 0
  if ARGV[1] ~= '' then
    from = now + quarantine
    lost = 1
  end
  redis.call('HSET', KEYS[1], 'token', ARGV[2], 'since', string.format('%d', now),
    'claimsFrom', string.format('%d', from))
  return {ARGV[2], from - now, lost}
end
if ARGV[4] == '1' and h[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'token', ARGV[2], 'since', string.format('%d', now),
    'claimsFrom', string.format('%d', now + quarantine))
  return {ARGV[2], quarantine, 1}
end
local from = tonumber(h[3]) or now
local lost = 0
if ARGV[1] ~= '' and h[1] ~= ARGV[1] then
  lost = 1
  local want = (tonumber(h[2]) or now) + quarantine
  if want > from then
    from = want
    redis.call('HSET', KEYS[1], 'claimsFrom', string.format('%d', from))
  end
end
return {h[1], math.max(0, from - now), lost}
