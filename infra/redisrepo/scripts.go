package redisrepo

import (
	"context"
	_ "embed"
	"math/rand/v2"
	"strconv"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/save_task.lua
	saveTaskSrc string
	//go:embed scripts/bump_fence.lua
	bumpFenceSrc string
	//go:embed scripts/save_plan.lua
	savePlanSrc string
	//go:embed scripts/release_tenant.lua
	releaseTenantSrc string
	//go:embed scripts/reactivate.lua
	reactivateSrc string
	//go:embed scripts/create_task.lua
	createTaskSrc string
	//go:embed scripts/create_plan.lua
	createPlanSrc string
	//go:embed scripts/restore_task.lua
	restoreTaskSrc string
	//go:embed scripts/restore_tenant.lua
	restoreTenantSrc string
	//go:embed scripts/generation.lua
	generationSrc string
	//go:embed scripts/retain_index.lua
	retainIndexSrc string
	//go:embed scripts/index_tasks.lua
	indexTasksSrc string
	//go:embed scripts/forget_rows.lua
	forgetRowsSrc string
	//go:embed scripts/keep_transcript.lua
	keepTranscriptSrc string
	//go:embed scripts/audit_append.lua
	auditAppendSrc string
	//go:embed scripts/audit_settle.lua
	auditSettleSrc string
	//go:embed scripts/notify_claim.lua
	notifyClaimSrc string
	//go:embed scripts/notify_record.lua
	notifyRecordSrc string

	saveTaskScript       = redis.NewScript(saveTaskSrc)
	bumpFenceScript      = redis.NewScript(bumpFenceSrc)
	savePlanScript       = redis.NewScript(savePlanSrc)
	releaseTenantScript  = redis.NewScript(releaseTenantSrc)
	reactivateScript     = redis.NewScript(reactivateSrc)
	restoreTaskScript    = redis.NewScript(restoreTaskSrc)
	createTaskScript     = redis.NewScript(createTaskSrc)
	createPlanScript     = redis.NewScript(createPlanSrc)
	restoreTenantScript  = redis.NewScript(restoreTenantSrc)
	generationScript     = redis.NewScript(generationSrc)
	retainIndexScript    = redis.NewScript(retainIndexSrc)
	indexTasksScript     = redis.NewScript(indexTasksSrc)
	forgetRowsScript     = redis.NewScript(forgetRowsSrc)
	keepTranscriptScript = redis.NewScript(keepTranscriptSrc)
	auditAppendScript    = redis.NewScript(auditAppendSrc)
	auditSettleScript    = redis.NewScript(auditSettleSrc)
	notifyClaimScript    = redis.NewScript(notifyClaimSrc)
	notifyRecordScript   = redis.NewScript(notifyRecordSrc)
)

// pipelinedScripts are the sources of the scripts sent by EVALSHA in pipelines (execScripts).
var pipelinedScripts = []string{createTaskSrc, createPlanSrc, retainIndexSrc, indexTasksSrc}

// execScripts runs fill on a fresh pipeline whose scripts are sent by EVALSHA, not with their
// whole source per command. When Redis lost its script cache (it restarted), a reply is
// NOSCRIPT: the scripts are loaded (on every node of a cluster) and the whole batch sent again, which every pipelined
// script allows (a claim finds itself, a creation writes nothing over what exists).
func (s *Store) execScripts(ctx context.Context, fill func(p redis.Pipeliner)) ([]redis.Cmder, error) {
	cmds, err := s.exec(ctx, fill)
	if !anyNoScript(cmds, err) {
		return cmds, err
	}
	for _, src := range pipelinedScripts {
		// On the client, not on a pipeline: a Redis Cluster client sends SCRIPT LOAD to every
		// node (a pipelined one, which names no key, would reach one node at random); and
		// Script.Load on a pipeline reads the not yet executed reply and overwrites the
		// script's SHA with "".
		if err := s.client.ScriptLoad(ctx, src).Err(); err != nil {
			return nil, err
		}
	}
	return s.exec(ctx, fill)
}

func anyNoScript(cmds []redis.Cmder, err error) bool {
	if isNoScript(err) {
		return true
	}
	for _, c := range cmds {
		if isNoScript(c.Err()) {
			return true
		}
	}
	return false
}

// Results of save_task.lua (and save_plan.lua: saved, conflict, reopened).
const (
	saved      = 1
	fenced     = 0
	noSuchTask = -1
	conflict   = 3
	reopened   = 4 // save_plan.lua: saved, and the plan had ended and is active again
	behind     = 5 // Redis holds an older version than the writer's: it lost acknowledged writes
)

// token returns a token unique to one write, so that a write go-redis repeats after a lost
// reply finds itself applied instead of conflicting with itself. It starts with this store's
// writer prefix (a random id per process and a dot): a write-back knows a state Redis holds
// from this very process, which its mirror supersedes, from another writer's.
func (s *Store) token() string { return s.writer + strconv.FormatUint(rand.Uint64(), 36) }
