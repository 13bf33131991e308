package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/roundtrips"
	"github.com/executor-dev/executor/server"
)

// executor is an in-process executor: the server's wiring (server.Executor), without HTTP,
// with its Redis round trips counted.
type executor struct {
	*server.Executor
	svc    *app.Service
	redis  redis.UniversalClient // nil on the in-memory store
	rt     *roundtrips.Counter   // nil on the in-memory store and in the deployment shape
	prefix string                // this run's key prefix; "" on the in-memory store
	conn   redisconn.Config      // the Redis, for the clean-up after the executor stopped
}

// openInProcess wires and starts cfg.Executors executors in-process on one store (keys under
// Prefix plus the run id) and the runner that drives them through their use cases.
func openInProcess(ctx context.Context, cfg Config, runID string, res *Result) (*runner, error) {
	res.Store, res.Through = "memory", ThroughUseCases
	var exes []*executor
	closeAll := func(ctx context.Context) error {
		var errs []error
		for i, e := range slices.Backward(exes) {
			if i == 0 {
				errs = append(errs, e.close(ctx)) // the first deletes the run's keys, once every other stopped
				continue
			}
			errs = append(errs, e.Stop(ctx))
		}
		return errors.Join(errs...)
	}
	u := &useCases{}
	for i := range cfg.Executors {
		name := ""
		if cfg.Executors > 1 {
			name = fmt.Sprintf("bench-%s-%d", runID, i+1)
		}
		e, err := newExecutor(ctx, cfg, cfg.Prefix+runID+":", name, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, errors.Join(err, closeAll(context.WithoutCancel(ctx)))
		}
		exes = append(exes, e)
		u.svcs = append(u.svcs, e.svc)
	}
	r := &runner{cfg: cfg, target: u, close: closeAll, healthy: func(context.Context) error {
		for _, e := range exes {
			if e.Degraded() {
				return errors.New("bench: Redis went away during the run: the measurements are not valid")
			}
		}
		return nil
	}}
	if e := exes[0]; e.redis != nil {
		res.Store, res.RedisMetrics, res.RoundTripsCounted = "redis", true, e.rt != nil
		r.redis = e.redis
		for _, e := range exes {
			if e.rt != nil {
				r.rts = append(r.rts, e.rt)
			}
		}
	}
	return r, nil
}

// newExecutor wires and starts an executor as cfg says (on Redis when cfg.RedisURL is set,
// else on memory), its keys under prefix, named name ("" the default name).
func newExecutor(ctx context.Context, cfg Config, prefix, name string, logger *slog.Logger) (*executor, error) {
	redisURL, cluster := cfg.RedisURL, cfg.RedisCluster
	topology, err := server.ParseTopology(cfg.Topology)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	// No submission limits: the bench sizes its plans itself (--tenants 100000).
	unlimited := app.Limits{MaxTenants: 1 << 30, MaxQueued: 1 << 30}
	exe, err := server.NewExecutor(server.Config{RedisURL: redisURL, RedisCluster: cluster, Topology: topology, Prefix: prefix,
		Name: name, Workers: cfg.Workers, Logger: logger, Limits: unlimited})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	e := &executor{Executor: exe, svc: exe.Service(), redis: exe.Redis()}
	if e.redis != nil {
		if cfg.StageDuration == 0 {
			// Not in the deployment shape, whose CPU per transition is a target: with a hook,
			// go-redis's full-duplex pipeline runs extra work per command and per batch (a
			// goroutine, its id parsed from a stack trace) that serve, which has none, does not.
			e.rt = &roundtrips.Counter{}
			e.redis.AddHook(e.rt)
		}
		if err := e.redis.Ping(roundtrips.Uncounted(ctx)).Err(); err != nil {
			_ = e.redis.Close()
			return nil, fmt.Errorf("bench: redis %s: %w", redisconn.Redact(redisURL), err)
		}
		e.prefix, e.conn = prefix, redisconn.Config{URL: redisURL, Cluster: cluster}
	}
	if err := exe.Start(ctx); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return e, nil
}

// close stops the executor (which closes its client), then deletes this run's keys on a
// client of its own. Not the other way round: a running executor that finds its keys gone
// takes it for a Redis that lost its data and writes everything back.
func (e *executor) close(ctx context.Context) error {
	serr := e.Stop(ctx)
	if e.prefix == "" {
		return serr
	}
	conn, err := redisconn.Open(e.conn)
	if err != nil {
		return errors.Join(serr, fmt.Errorf("bench: delete keys: %w", err))
	}
	defer conn.Client.Close()
	return errors.Join(serr, e.deleteKeys(ctx, conn.Client))
}

// deleteKeys deletes every key under this run's prefix, and nothing else. DEL, not UNLINK:
// memory freed in the background would still count in the next run's measurement.
func (e *executor) deleteKeys(ctx context.Context, client redis.UniversalClient) error {
	return forEachMaster(ctx, client, func(ctx context.Context, node *redis.Client) error {
		return e.deleteKeysOn(ctx, node)
	})
}

// deleteKeysOn deletes this run's keys held by one node.
func (e *executor) deleteKeysOn(ctx context.Context, node *redis.Client) error {
	iter := node.Scan(ctx, 0, globEscape(e.prefix)+"*", 1000).Iterator()
	batch := make([]string, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// A DEL per key, pipelined: a node of a Redis Cluster refuses a DEL whose keys span
		// slots.
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.Del(ctx, k)
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if k := iter.Val(); strings.HasPrefix(k, e.prefix) {
			batch = append(batch, k)
		}
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("bench: delete keys: %w", err)
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("bench: scan keys: %w", err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("bench: delete keys: %w", err)
	}
	return nil
}

// forEachMaster calls fn with the client itself on one node (or Sentinel's master), and with
// each master's on a Redis Cluster, one after the other.
func forEachMaster(ctx context.Context, c redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex // ForEachMaster calls fn concurrently
		return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return fn(ctx, node)
		})
	}
	node, ok := c.(*redis.Client)
	if !ok {
		return fmt.Errorf("bench: unexpected Redis client %T", c)
	}
	return fn(ctx, node)
}

// globEscape escapes the glob metacharacters of a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
