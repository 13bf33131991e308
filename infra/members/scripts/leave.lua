-- leave.lua: a clean stop deletes the executor's liveness key, if it is still its own.
-- KEYS[1]: the liveness key, <prefix>executor:{<name>}
-- ARGV[1]: this process's instance marker, "instance":"<token>"
-- Returns 1: deleted; 2: the key was already gone; 0: the key holds another process's value
-- (it took the name after this one's key expired): nothing is deleted.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return 2
end
if not string.find(cur, ARGV[1], 1, true) then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
