package redistest

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Tests kill and freeze their servers on purpose: go-redis's own "failed to dial" lines would
// only bury the test output.
func init() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
