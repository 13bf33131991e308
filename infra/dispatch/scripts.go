package dispatch

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/push.lua
	pushSrc string
	//go:embed scripts/return.lua
	returnSrc string
	//go:embed scripts/claim.lua
	claimSrc string
	//go:embed scripts/done.lua
	doneSrc string
	//go:embed scripts/remove.lua
	removeSrc string
	//go:embed scripts/drain.lua
	drainSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/pause.lua
	pauseSrc string
	//go:embed scripts/close.lua
	closeSrc string

	pushScript    = redis.NewScript(pushSrc)
	returnScript  = redis.NewScript(returnSrc)
	claimScript   = redis.NewScript(claimSrc)
	doneScript    = redis.NewScript(doneSrc)
	removeScript  = redis.NewScript(removeSrc)
	drainScript   = redis.NewScript(drainSrc)
	releaseScript = redis.NewScript(releaseSrc)
	pauseScript   = redis.NewScript(pauseSrc)
	closeScript   = redis.NewScript(closeSrc)
)
