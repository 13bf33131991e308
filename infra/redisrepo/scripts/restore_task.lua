-- restore_task.lua: write back a task (and its checkpoint) that changed while Redis was away,
-- as its full latest state, as a compare-and-set on the version Redis held when this
-- executor began changing it on its own: create it if Redis lost it, update it only if nobody
-- else wrote it since.
-- KEYS[1]  the task hash        executor:task:{<taskId>}
-- KEYS[2]  the task checkpoint  executor:ckpt:{<taskId>}
-- ARGV[1]  the task's fence epoch
-- ARGV[2]  TTL in seconds of both keys: the retention when the task's plan has ended, 0 (no
--          TTL) while it is active
-- ARGV[3]  the checkpoint JSON, or "" when the task has none
-- ARGV[4]  the base version: the version Redis held before this executor's first change
--          while it was away (0 for a task created meanwhile: its creation, had it reached
--          Redis, holds version 0)
-- ARGV[5]  this executor's own writes, comma-separated: "<prefix>*" (any write token of this
--          process starts with its prefix), then the tokens of its writes whose outcome is
--          unknown (the write whose reply was lost as the outage began first, then write-backs
--          whose pipeline failed; the last one is this write-back's own): Redis holding one of
--          them holds this executor's own write, which its full state supersedes
-- ARGV[6]  the task's version now (written with the fields)
-- ARGV[7]  after Redis lost its data, the generation of its data since ("" otherwise): the
--          hash is then marked restored=<generation>, and over a hash so marked for the same
--          generation (another executor's copy written back for this loss) newest wins:
--          written unless it holds the same or a newer version, or a newer fence epoch
-- ARGV[8]  the stage the checkpoint (ARGV[3]) resumes at (its completed stages), -1 without one
-- ARGV[9…] field, value pairs of the whole task hash (fence, version and this write-back's
--          token as wtoken included)
-- A stored version lower than the base means Redis lost writes it had acknowledged (versions
-- only grow: a master failed over to a replica that had not received them, or restarted from
-- an older snapshot): this executor's newer copy is written back, unless Redis holds a newer
-- fence epoch.
-- Refused (a conflict), the checkpoint is still written when Redis has none for the task
-- and it resumes at the stage Redis's task is at (keep_checkpoint below): after a data loss,
-- the copy Redis holds may be a reaper's, written back without the checkpoint it never held.
-- returns  1 written; 0 conflict: Redis holds a newer epoch, or another writer changed the
--          task since the base version (or holds a newer copy written back for the same
--          loss): nothing written; 2 Redis holds this very version
--          already (an earlier write-back whose reply was lost), or a later one of this
--          executor's own (this write-back arrived late): nothing written
-- ours: the token is one of ARGV[5]'s: an exact token, or one starting with a "<prefix>*"
-- entry's prefix (any write of this executor's process).
local function ours(token)
  if not token or token == '' then
    return false
  end
  for entry in string.gmatch(ARGV[5], '[^,]+') do
    if string.sub(entry, -1) == '*' then
      if string.sub(token, 1, #entry - 1) == string.sub(entry, 1, -2) then
        return true
      end
    elseif entry == token then
      return true
    end
  end
  return false
end
-- keep_checkpoint writes ARGV[3] when Redis holds no checkpoint of the task and the task Redis
-- holds is at the stage the checkpoint resumes at (stage: its "stage" field): the completed
-- stages it records are then those of the task as Redis holds it, and a retry from the
-- checkpoint does not run them again. Its TTL is the task's.
local function keep_checkpoint(stage)
  if ARGV[3] == '' or tonumber(ARGV[8]) ~= tonumber(stage) or redis.call('EXISTS', KEYS[2]) == 1 then
    return
  end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ttl)
  else
    redis.call('SET', KEYS[2], ARGV[3])
  end
end
local stored = redis.call('HMGET', KEYS[1], 'fence', 'version', 'wtoken', 'restored', 'stage')
if stored[1] then
  local fence = tonumber(stored[1])
  local version = tonumber(stored[2]) or 0
  local base = tonumber(ARGV[4])
  if fence > tonumber(ARGV[1]) then
    keep_checkpoint(stored[5])
    return 0
  end
  if fence == tonumber(ARGV[1]) and version == tonumber(ARGV[6]) then
    return 2
  end
  if fence == tonumber(ARGV[1]) and version > tonumber(ARGV[6]) and ours(stored[3]) then
    return 2 -- a later write of this executor's own is there (this write-back arrived late)
  end
  if ARGV[7] ~= '' and stored[4] == ARGV[7] then
    if version > tonumber(ARGV[6]) then
      keep_checkpoint(stored[5])
      return 0
    end
  elseif version ~= base and not ours(stored[3]) and not (version < base) then
    keep_checkpoint(stored[5])
    return 0
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 9))
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[1], 'restored', ARGV[7])
end
do
  -- The write whose reply was lost may still reach Redis (held in the network): as a fence
  -- bump it must find itself done (as a save it finds another version). Its token joins the
  -- bumps done (bump_fence.lua's list), never replaces them: a bump of this run whose copy is
  -- still held must find itself done too.
  for entry in string.gmatch(ARGV[5], '[^,]+') do
    if string.sub(entry, -1) ~= '*' then
      local done = redis.call('HGET', KEYS[1], 'bump') or ''
      local list, known = {entry}, false
      for token in string.gmatch(done, '[^,]+') do
        if token == entry then
          known = true
        elseif #list < 8 then
          list[#list + 1] = token
        end
      end
      if not known then
        redis.call('HSET', KEYS[1], 'bump', table.concat(list, ','))
      end
      break
    end
  end
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
else
  redis.call('PERSIST', KEYS[1])
end
if ARGV[3] ~= '' then
  if ttl > 0 then
    redis.call('SET', KEYS[2], ARGV[3], 'EX', ttl)
  else
    redis.call('SET', KEYS[2], ARGV[3])
  end
end
return 1
