package members

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/beat.lua
	beatSource string
	//go:embed scripts/leave.lua
	leaveSource string

	beatScript  = redis.NewScript(beatSource)
	leaveScript = redis.NewScript(leaveSource)
)

// Results of beat.lua and leave.lua.
const (
	scriptOthers  = 0 // the key holds another process's value
	scriptDone    = 1 // refreshed / deleted
	scriptWasGone = 2 // the key was gone
)
