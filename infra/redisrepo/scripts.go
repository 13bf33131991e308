package redisrepo

import (
	_ "embed"

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
	//go:embed scripts/claim_tenant.lua
	claimTenantSrc string
	//go:embed scripts/create_task.lua
	createTaskSrc string
	//go:embed scripts/create_plan.lua
	createPlanSrc string
	//go:embed scripts/restore_task.lua
	restoreTaskSrc string
	//go:embed scripts/restore_tenant.lua
	restoreTenantSrc string

	saveTaskScript      = redis.NewScript(saveTaskSrc)
	bumpFenceScript     = redis.NewScript(bumpFenceSrc)
	savePlanScript      = redis.NewScript(savePlanSrc)
	releaseTenantScript = redis.NewScript(releaseTenantSrc)
	reactivateScript    = redis.NewScript(reactivateSrc)
	restoreTaskScript   = redis.NewScript(restoreTaskSrc)
	claimTenantScript   = redis.NewScript(claimTenantSrc)
	createTaskScript    = redis.NewScript(createTaskSrc)
	createPlanScript    = redis.NewScript(createPlanSrc)
	restoreTenantScript = redis.NewScript(restoreTenantSrc)
)

// Results of save_task.lua.
const (
	saved      = 1
	fenced     = 0
	noSuchTask = -1
	stale      = 2
)
