package orchestrator

import (
	"log/slog"
	"math/rand/v2"
	"time"
)

// DefaultWorkers is the default cap on tasks running at once across all plans.
const DefaultWorkers = 64

// Config tunes an Orchestrator. Zero fields take defaults.
type Config struct {
	Workers int              // tasks running at once across all plans; default DefaultWorkers
	Clock   func() time.Time // default time.Now
	Rand    func() float64   // uniform in [0,1), for backoff jitter; default math/rand/v2
	Logger  *slog.Logger     // default slog.Default()
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
