package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/roundtrips"
)

const (
	// accessTimeout bounds one check of what Redis grants the executor.
	accessTimeout = 3 * time.Second
	// accessEvery is how often, at most, GET /readyz checks again what Redis grants.
	accessEvery = 5 * time.Second
)

// access is what Redis grants the executor (redisconn.Access: its password, its ACL
// user's keys, channels and commands, the commands it needs, the TLS certificate), checked at
// start, by the reach loop (reach.go), and by GET /readyz at most every accessEvery. A refusal
// makes the executor not ready (GET /readyz 503 naming it; new work and queries 503 naming
// it) until a check finds everything granted.
type access struct {
	checker *redisconn.Access // nil before init
	log     *slog.Logger
	kick    chan struct{} // a refusal found by GET /readyz: the reach loop checks again until granted

	mu      sync.Mutex // one check at a time
	checked time.Time  // when the last check got an answer (granted or refused)

	stateMu sync.RWMutex
	answer  bool  // a check got an answer
	denied  error // the refusal of the last answer; nil: everything granted (or no answer yet)
}

// init sets what to check: on client, the keys and channels of cfg.Prefix.
func (a *access) init(client redis.UniversalClient, cfg Config) {
	keys := rediskey.New(cfg.Prefix)
	a.log, a.kick = cfg.Logger, make(chan struct{}, 1)
	a.checker = redisconn.NewAccess(client, redisconn.Needs{
		Prefix: keys.Prefix(),
		// A key of readiness's own (GET /readyz writes and deletes such keys): under the prefix,
		// one per process.
		Probe:    keys.Ready("access-" + ulid.Make().String()),
		Stream:   keys.Events(),
		Channels: []string{keys.Signals(), keys.DispatchWake(), keys.ScheduleWake()},
	})
}

// check asks Redis once and records its answer; it returns nil when everything is granted,
// the refusal (matching redisconn.ErrDenied), or the error of a Redis that could not be asked
// (nothing recorded).
func (a *access) check(ctx context.Context) error {
	if a.checker == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	cctx, cancel := context.WithTimeout(roundtrips.Uncounted(ctx), accessTimeout)
	defer cancel()
	err := a.checker.Check(cctx)
	if err != nil && !errors.Is(err, redisconn.ErrDenied) {
		return err
	}
	a.checked = time.Now()
	a.record(err)
	return err
}

// recent is GET /readyz's check: the last answer if it is younger than accessEvery (unless
// force: the probe met a refusal), else a new check; a refusal found so wakes the reach loop,
// which checks again until Redis grants everything.
func (a *access) recent(ctx context.Context, force bool) error {
	a.mu.Lock()
	fresh := !force && time.Since(a.checked) < accessEvery
	a.mu.Unlock()
	if fresh {
		return a.refusal()
	}
	err := a.check(ctx)
	if errors.Is(err, redisconn.ErrDenied) {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
	return err
}

// record keeps an answer (denied nil: everything granted), and logs a change.
func (a *access) record(denied error) {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	was, had := a.denied, a.answer
	a.answer, a.denied = true, denied
	switch {
	case denied != nil && (was == nil || was.Error() != denied.Error()):
		a.log.Warn("redis refuses what this executor needs: not ready; new plans, commands on other executors' work and queries answer 503 until it grants it",
			"err", denied)
	case denied == nil && was != nil:
		a.log.Info("redis grants what this executor needs again")
	case denied == nil && !had:
		a.log.Debug("redis grants what this executor needs")
	}
}

// granted reports whether the last check that got an answer found everything granted.
func (a *access) granted() bool {
	a.stateMu.RLock()
	defer a.stateMu.RUnlock()
	return a.answer && a.denied == nil
}

// refusal returns what Redis refuses the executor (nil: nothing known).
func (a *access) refusal() error {
	a.stateMu.RLock()
	defer a.stateMu.RUnlock()
	return a.denied
}

// kicked receives when GET /readyz found a refusal.
func (a *access) kicked() <-chan struct{} { return a.kick }

// readyProbe is GET /readyz's probe on Redis: the store's write and read of a key, then what
// Redis grants the executor (access.recent): a refusal answers 503 naming it.
func (e *Executor) readyProbe(ctx context.Context) error {
	err := e.store.Ready(ctx)
	if err != nil && !outage.Denied(err) {
		return err
	}
	if aerr := e.reach.access.recent(ctx, err != nil); aerr != nil {
		return aerr
	}
	return err
}
