// Package rediskey builds every Redis key the executor uses (docs/design.md §5), in one place. The
// braces are literal Redis Cluster hash tags: every key of one task shares a slot, every key
// of one tenant shares a slot, and the dispatch keys of one plan share a slot.
package rediskey

import (
	"crypto/sha256"
	"encoding/hex"
)

// DefaultPrefix is the default key prefix.
const DefaultPrefix = "executor:"

// Keys builds keys under a prefix.
type Keys struct{ prefix string }

// New returns keys under prefix ("" means DefaultPrefix).
func New(prefix string) Keys {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return Keys{prefix: prefix}
}

// Prefix returns the prefix.
func (k Keys) Prefix() string { return k.prefix }

// Plan is the plan hash: executor:plan:{<planId>}.
func (k Keys) Plan(planID string) string { return k.prefix + "plan:{" + planID + "}" }

// PlanRows is the plan's index of its tasks (a hash: task id → row), in the plan's slot:
// executor:planrows:{<planId>}. See infra/redisrepo/scripts/index_tasks.lua.
func (k Keys) PlanRows(planID string) string { return k.prefix + "planrows:{" + planID + "}" }

// PlanCounts is the summary of the plan's index (a hash of counters), in the plan's slot:
// executor:plancounts:{<planId>}.
func (k Keys) PlanCounts(planID string) string { return k.prefix + "plancounts:{" + planID + "}" }

// PlanRunning is the plan's RUNNING tasks by the time they entered their stage (a sorted set,
// ms), in the plan's slot: executor:planrunning:{<planId>}.
func (k Keys) PlanRunning(planID string) string { return k.prefix + "planrunning:{" + planID + "}" }

// Audit is the audit trail of a plan (a stream, one entry per operator action, oldest
// first), in the plan's slot: executor:audit:{<planId>}; that of no plan (an unlock of a
// tenant without a task) for planID "": executor:audit:{-}.
func (k Keys) Audit(planID string) string { return k.prefix + "audit:{" + auditTag(planID) + "}" }

// AuditOutcomes holds what came of the actions of Audit(planID) (a hash: record id → outcome
// JSON), in the plan's slot: executor:auditout:{<planId>}.
func (k Keys) AuditOutcomes(planID string) string {
	return k.prefix + "auditout:{" + auditTag(planID) + "}"
}

// auditTag is the hash tag of a plan's audit keys: "-" for no plan.
func auditTag(planID string) string {
	if planID == "" {
		return "-"
	}
	return planID
}

// Notify is where the deliveries of a plan's notifications stand (a hash: s:<notice>/<dest>
// → state JSON, c:<…> → "<owner>|<until ms>" a claim, d:<…> done; _done → the last notice
// id with nothing left before it), in the plan's slot: executor:notify:{<planId>}.
func (k Keys) Notify(planID string) string { return k.prefix + "notify:{" + planID + "}" }

// Notifying is the set of plans that may have notifications left to deliver:
// executor:notifying.
func (k Keys) Notifying() string { return k.prefix + "notifying" }

// Task is the task hash: executor:task:{<taskId>}.
func (k Keys) Task(taskID string) string { return k.prefix + "task:{" + taskID + "}" }

// Checkpoint is the task's checkpoint string: executor:ckpt:{<taskId>}.
func (k Keys) Checkpoint(taskID string) string { return k.prefix + "ckpt:{" + taskID + "}" }

// Transcripts is the hash of what the task's stage attempts printed, one field per attempt,
// "<stageIndex>:<run>:<attempt>", its value {"stdout":…,"stderr":…}, in the task's slot:
// executor:out:{<taskId>}. See infra/redisrepo/scripts/keep_transcript.lua.
func (k Keys) Transcripts(taskID string) string { return k.prefix + "out:{" + taskID + "}" }

// TenantIndex holds the tenant's latest task id: executor:index:tenant:{<tenantId>}.
func (k Keys) TenantIndex(tenantID string) string {
	return k.prefix + "index:tenant:{" + tenantID + "}"
}

// TenantActive names the tenant's task that has not ended, while there is one:
// executor:active:tenant:{<tenantId>}. Claimed with SET NX when a plan is created, so two
// executors can never both give a tenant a new task.
func (k Keys) TenantActive(tenantID string) string {
	return k.prefix + "active:tenant:{" + tenantID + "}"
}

// TenantLock is the tenant's lease: executor:lock:tenant:{<tenantId>}.
func (k Keys) TenantLock(tenantID string) string {
	return k.prefix + "lock:tenant:{" + tenantID + "}"
}

// TenantLockReleased is the tombstone an operator's force release leaves for the lease it
// removed: executor:lock:released:{<tenantId>}. It holds the exact value deleted from
// TenantLock (token followed by the owner) and expires after a few lease TTLs, so that the
// holder's watchdog, seeing it, gives the lease up instead of taking its key back. Same
// hash tag as TenantLock: one script reads and writes both.
func (k Keys) TenantLockReleased(tenantID string) string {
	return k.prefix + "lock:released:{" + tenantID + "}"
}

// Instance is one executor process's sentinel: present while the Redis it writes to keeps
// its data; missing after Redis restarted empty, which calls for a full write-back:
// executor:instance:{<id>}.
func (k Keys) Instance(id string) string { return k.prefix + "instance:{" + id + "}" }

// Ready is one executor process's readiness key: GET /readyz writes a fresh value to it and
// reads it back with GETDEL (a 30 s TTL in case the read does not come): executor:ready:{<id>},
// the id of the process's Instance key.
func (k Keys) Ready(id string) string { return k.prefix + "ready:{" + id + "}" }

// Generation is the HASH that tells executors whether Redis still holds the data they saw:
// token (random, made when the hash was created), since and claimsFrom (Redis times, ms). An
// executor that finds another token than the one it saw, or none, knows that Redis lost its
// data; new tenant claims wait until claimsFrom, so that the executors that were running
// tenants have one lease TTL to take their leases back and write their state back:
// executor:generation. It never expires.
func (k Keys) Generation() string { return k.prefix + "generation" }

// Executors is the HASH of the executors registered on this Redis, one field per executor
// name, its value the executor's registration as JSON (infra/members): executor:executors.
// An entry outlives its executor until it is pruned; Executor(name) tells whether it lives.
func (k Keys) Executors() string { return k.prefix + "executors" }

// Executor is an executor's liveness key, a string with a TTL refreshed by the executor
// while it runs: executor:executor:{<name>}. Present: the executor is alive; gone (expired
// or deleted by a clean stop): it is not. Its hash tag is the executor's name.
func (k Keys) Executor(name string) string { return k.prefix + "executor:{" + name + "}" }

// Plans is the ZSET of plan ids by creation time: executor:plans.
func (k Keys) Plans() string { return k.prefix + "plans" }

// Schedule is the ZSET of scheduled plan ids by startAt in Unix milliseconds:
// executor:schedule. A claimed entry is re-scored to its claim's expiry (a visibility
// timeout) until it is acknowledged and removed.
func (k Keys) Schedule() string { return k.prefix + "schedule" }

// ScheduleWake is the pub/sub channel on which a new earliest schedule entry is announced,
// with its startAt in Unix milliseconds as the message: executor:schedule:wake.
func (k Keys) ScheduleWake() string { return k.prefix + "schedule:wake" }

// DispatchQueue is the ZSET of a RUNNING plan's queued (never started) task ids, scored by
// position: executor:queue:{<planId>}. A push scores its ids with an increasing counter
// (Dispatch's seq), a task handed back goes in front with the lowest score minus one, so the
// score order is the start order. Same hash tag as DispatchInFlight and Dispatch: one
// script reads and writes all three.
func (k Keys) DispatchQueue(planID string) string { return k.prefix + "queue:{" + planID + "}" }

// DispatchInFlight is the HASH of a plan's claimed tasks that have not ended, taskId ->
// "<executor>|<claim time in Unix ms, by Redis's clock>": executor:inflight:{<planId>}.
// Its length is what the plan's maxConcurrency bounds.
func (k Keys) DispatchInFlight(planID string) string {
	return k.prefix + "inflight:{" + planID + "}"
}

// Dispatch is the HASH of a plan's dispatch limits and counters: executor:dispatch:{<planId>},
// fields limit (maxConcurrency), rate (starts per minute, 0: none), budget (failure budget,
// 0: none), failed, paused (0/1), next (the earliest next start in Unix ms while paced) and
// seq (the last queue position given).
func (k Keys) Dispatch(planID string) string { return k.prefix + "dispatch:{" + planID + "}" }

// Dispatching is the SET of plan ids with queued or in-flight work: executor:dispatching.
// Another slot than the plans' keys, so it is written in a command of its own, after the
// plan's script (a push writes its queue first, then adds the plan here).
func (k Keys) Dispatching() string { return k.prefix + "dispatching" }

// DispatchWake is the pub/sub channel on which a plan id is published when one of its tasks
// may have become claimable (a push, a task handed back, ended or released, an unpause):
// executor:dispatch:wake.
func (k Keys) DispatchWake() string { return k.prefix + "dispatch:wake" }

// Signals is the pub/sub channel on which executors tell one another of operators' commands
// ("cancel <taskId>", "pause <taskId>", "plan <planId>"), so that the executor running a task
// acts on a command at once: executor:signals.
func (k Keys) Signals() string { return k.prefix + "signals" }

// Events is the cluster's event stream (a Redis Stream, capped with XADD MAXLEN ~):
// executor:events. Every executor on Redis writes its events to it and serves GET /v1/events
// from it; external subscribers may read it too.
func (k Keys) Events() string { return k.prefix + "events" }

// Idempotency maps an Idempotency-Key to the plan first submitted with it:
// executor:idem:{<sha256 of the key>}. The key is hashed because it is client text.
func (k Keys) Idempotency(key string) string {
	sum := sha256.Sum256([]byte(key))
	return k.prefix + "idem:{" + hex.EncodeToString(sum[:]) + "}"
}
