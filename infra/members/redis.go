package members

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/rediskey"
)

// Redis is the registry of the executors sharing one Redis (see the package doc).
type Redis struct {
	client   redis.UniversalClient
	keys     rediskey.Keys
	opts     Options
	instance string // random token of this process's registration

	life      sync.Mutex
	started   bool
	stopped   bool
	startedAt time.Time
	cancel    context.CancelFunc
	done      chan struct{} // closed when the loop has returned

	state beatState // the loop's view of its last refresh; the loop's alone
	// topologyChecked: checkTopology ran (at Start, or at the loop's first refresh when Redis
	// did not answer at Start); Start's before the loop, then the loop's alone.
	topologyChecked bool

	lapsedAt atomic.Int64 // unix ns when this executor last found its own liveness key gone; 0: never
}

// NewRedis returns the registry on client for the executor opts.Name; Start registers it.
func NewRedis(client redis.UniversalClient, opts Options) (*Redis, error) {
	if err := CheckName(opts.Name); err != nil {
		return nil, err
	}
	var token [8]byte
	_, _ = rand.Read(token[:]) // never fails (crypto/rand)
	return &Redis{client: client, keys: rediskey.New(opts.Prefix), opts: opts.withDefaults(), instance: hex.EncodeToString(token[:])}, nil
}

// Name returns this executor's name.
func (r *Redis) Name() string { return r.opts.Name }

// Alive reports whether the executor name is alive: its liveness key exists.
func (r *Redis) Alive(ctx context.Context, name string) (bool, error) {
	n, err := r.client.Exists(ctx, r.keys.Executor(name)).Result()
	if err != nil {
		return false, fmt.Errorf("members: alive %s: %w", name, err)
	}
	return n == 1, nil
}

// AliveSince reports whether the executor name is alive and is the same process since at
// least since: its liveness key exists and its registration started no later. A run started
// before a restart of its executor under the same name is not that executor's any more.
func (r *Redis) AliveSince(ctx context.Context, name string, since time.Time) (bool, error) {
	var exists *redis.IntCmd
	var reg *redis.StringCmd
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, r.keys.Executor(name))
		reg = p.HGet(ctx, r.keys.Executors(), name)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("members: alive %s: %w", name, err)
	}
	if exists.Val() == 0 {
		return false, nil
	}
	var rec registration
	if json.Unmarshal([]byte(reg.Val()), &rec) != nil {
		return true, nil // alive, its registration unreadable (not written yet): give it the benefit
	}
	return !rec.StartedAt.After(since), nil
}

// Steady reports whether this executor's own liveness has held without a lapse for at least
// d: its key is there now, and neither this call nor a refresh found it gone within d. After
// a lapse (Redis stalled past the TTL, or lost its data) every executor's keys and heartbeats
// lapsed alike: nobody may judge another executor dead until all had d to beat again.
func (r *Redis) Steady(ctx context.Context, d time.Duration) (bool, error) {
	n, err := r.client.Exists(ctx, r.keys.Executor(r.opts.Name)).Result()
	if err != nil {
		return false, fmt.Errorf("members: steady: %w", err)
	}
	if n == 0 {
		r.lapsed()
		return false, nil
	}
	at := r.lapsedAt.Load()
	return at == 0 || time.Since(time.Unix(0, at)) >= d, nil
}

// lapsed records that this executor's liveness key was found gone.
func (r *Redis) lapsed() { r.lapsedAt.Store(time.Now().UnixNano()) }

// List returns every registered executor, alive or not, sorted by name. The entries of
// executors not alive whose last heartbeat is older than PruneAfter are removed from the
// HASH on the way (best effort) and left out.
func (r *Redis) List(ctx context.Context) ([]Member, error) {
	entries, err := r.client.HGetAll(ctx, r.keys.Executors()).Result()
	if err != nil {
		return nil, fmt.Errorf("members: list: %w", err)
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	gets := make([]*redis.StringCmd, len(names))
	if len(names) > 0 {
		_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, name := range names {
				gets[i] = p.Get(ctx, r.keys.Executor(name))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("members: list heartbeats: %w", err)
		}
	}
	out := make([]Member, 0, len(names))
	var prune []string
	now := time.Now()
	for i, name := range names {
		var reg registration
		if err := json.Unmarshal([]byte(entries[name]), &reg); err != nil || reg.Name != name {
			r.opts.Logger.Warn("members: an executors entry is not a registration; left out", "executor_name", name)
			continue
		}
		m := Member{Name: name, Address: reg.Address, Version: reg.Version, StartedAt: reg.StartedAt,
			LastHeartbeat: reg.HeartbeatAt, Runs: reg.Runs, Topology: reg.Topology, Kinds: reg.Kinds}
		raw, err := gets[i].Result()
		switch {
		case err == nil:
			var hb heartbeat
			if json.Unmarshal([]byte(raw), &hb) == nil {
				m.LastHeartbeat, m.Runs = hb.HeartbeatAt, hb.Runs
				if hb.Instance == r.instance {
					m.Runs = r.opts.Runs() // this executor: its runs now, not at its last heartbeat
				}
			}
			m.Alive = true
		case !errors.Is(err, redis.Nil):
			return nil, fmt.Errorf("members: list heartbeat of %s: %w", name, err)
		case now.Sub(reg.HeartbeatAt) > r.opts.PruneAfter:
			prune = append(prune, name)
			continue
		}
		out = append(out, m)
	}
	r.prune(ctx, prune)
	return out, nil
}

// prune removes the entries of executors gone for longer than PruneAfter. Best effort: a
// failure is logged, and the next List tries again. An executor that comes back meanwhile
// writes its entry again at its next refresh.
func (r *Redis) prune(ctx context.Context, names []string) {
	if len(names) == 0 {
		return
	}
	if err := r.client.HDel(ctx, r.keys.Executors(), names...).Err(); err != nil {
		r.opts.Logger.Debug("members: pruning dead executors failed", "executors", strings.Join(names, ","),
			"err", fmt.Errorf("members: prune: %w", err))
		return
	}
	r.opts.Logger.Info("members: pruned executors gone for a while", "executors", strings.Join(names, ","),
		"prune_after", r.opts.PruneAfter.String())
}
