//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvDuration = "CHAOS_DURATION" // how long faults are injected: a Go duration, default 25s
	EnvSeed     = "CHAOS_SEED"     // the seed of every random choice; default: the time
	EnvSettle   = "CHAOS_SETTLE"   // bound on the recovery after the run; default 4m
	EnvKeepLogs = "CHAOS_KEEP"     // "1": keep the executors' logs and the history even when green
)

// DefaultDuration is the short run `make test` makes.
const DefaultDuration = 25 * time.Second

// Config is one chaos run's settings.
type Config struct {
	Duration       time.Duration // faults are injected (and plans submitted) for this long
	Seed           int64         // seeds every random choice (workload, faults, proxies)
	Executors      int           // executor processes
	LeaseTTL       time.Duration // their --lease-ttl
	Workers        int           // their --workers
	MaxActivePlans int           // plans running at once (PAUSED ones not counted)
	SubmitEvery    time.Duration // a submission at most this often
	CancelEvery    time.Duration // a cancel of a running tenant about this often
	TenantPool     int           // tenant names reused once their task ended
	FailRate       float64       // share of stage calls the target answers 503 (retried by the stage)
	Settle         time.Duration // bound on the recovery after the run
	Grace          time.Duration // a stage call starting this long after a cancel's answer breaks it
	KeepLogs       bool          // keep the artifacts directory when the run is green
}

// ConfigFromEnv returns the defaults, with CHAOS_DURATION, CHAOS_SEED, CHAOS_SETTLE and
// CHAOS_KEEP applied.
func ConfigFromEnv() (Config, error) {
	c := Config{
		Duration:       DefaultDuration,
		Seed:           time.Now().UnixNano(),
		Executors:      3,
		LeaseTTL:       3 * time.Second,
		Workers:        8,
		MaxActivePlans: 4,
		SubmitEvery:    time.Second,
		CancelEvery:    3 * time.Second,
		TenantPool:     24,
		FailRate:       0.03,
		Settle:         4 * time.Minute,
		Grace:          time.Second,
		KeepLogs:       os.Getenv(EnvKeepLogs) == "1",
	}
	if v := os.Getenv(EnvDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive Go duration such as 5m", EnvDuration, v)
		}
		c.Duration = d
	}
	if v := os.Getenv(EnvSeed); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("%s=%q: want an integer", EnvSeed, v)
		}
		c.Seed = s
	}
	if v := os.Getenv(EnvSettle); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive Go duration", EnvSettle, v)
		}
		c.Settle = d
	}
	return c, nil
}
