-- beat.lua: refresh an executor's liveness key, unless another process holds it.
-- KEYS[1]: the liveness key, <prefix>executor:{<name>}
-- ARGV[1]: this process's instance marker, "instance":"<token>", as it appears in the value
-- ARGV[2]: the new value (heartbeat JSON, holding the marker)
-- ARGV[3]: the TTL in milliseconds
-- Returns 1: refreshed; 2: the key was gone (it expired, or Redis lost it) and is set again;
-- 0: the key holds another process's value: nothing is written.
local cur = redis.call('GET', KEYS[1])
if cur and not string.find(cur, ARGV[1], 1, true) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if cur then
  return 1
end
return 2
