package schedule

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/schedule.lua
	scheduleSrc string
	//go:embed scripts/claim.lua
	claimSrc string
	//go:embed scripts/ack.lua
	ackSrc string

	scheduleScript = redis.NewScript(scheduleSrc)
	claimScript    = redis.NewScript(claimSrc)
	ackScript      = redis.NewScript(ackSrc)
)
