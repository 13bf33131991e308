package server

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/infra/members"
)

// leaveTimeout bounds the deregistration at Stop: a Redis that does not answer then does
// not hold the shutdown up (the liveness key expires by itself).
const leaveTimeout = 2 * time.Second

// registry is infra/members' Memory or Redis: the executors sharing this one's store.
type registry interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	List(ctx context.Context) ([]members.Member, error)
	Alive(ctx context.Context, name string) (bool, error)
	AliveSince(ctx context.Context, name string, since time.Time) (bool, error)
	Steady(ctx context.Context, d time.Duration) (bool, error)
}

// CheckName returns an error when name cannot name an executor (Config.Name): it must match
// members.NamePattern, since it becomes part of Redis keys.
func CheckName(name string) error { return members.CheckName(name) }

// join registers this executor, serving at addr, among the executors of its store, and
// keeps it registered until Stop (see infra/members). On Redis it fails, wrapping
// members.ErrNameInUse, when a live executor has the same name.
func (e *Executor) join(ctx context.Context, addr string) error {
	opts := members.Options{
		Name: e.cfg.Name, Address: addr, Version: version(), Prefix: e.cfg.Prefix, TTL: e.cfg.LeaseTTL,
		Runs: e.orch.Running, Logger: e.cfg.Logger, Topology: string(e.cfg.Topology), Kinds: e.kinds.Kinds(),
	}
	var reg registry
	var err error
	if e.redis != nil {
		reg, err = members.NewRedis(e.redis, opts)
	} else {
		reg, err = members.NewMemory(opts)
	}
	if err != nil {
		return err
	}
	if err := reg.Start(ctx); err != nil {
		return err
	}
	e.members.set(reg)
	return nil
}

// leave deregisters this executor (a clean stop: other executors list it no more). A
// failure is logged, not returned: the liveness key expires by itself and the entry is
// pruned later.
func (e *Executor) leave(ctx context.Context) error {
	reg := e.members.get()
	if reg == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, leaveTimeout)
	defer cancel()
	if err := reg.Stop(ctx); err != nil {
		e.cfg.Logger.Warn("executor not deregistered; other executors see it as not alive once its liveness key expires",
			"ttl", e.cfg.LeaseTTL.String(), "err", err)
	}
	return nil
}

// memberPort is the registry as the use cases see it (app.Members). Until the executor has
// joined (Server.Start) it lists nothing.
type memberPort struct {
	mu   sync.Mutex
	name string
	reg  registry
}

func (p *memberPort) set(reg registry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reg = reg
}

func (p *memberPort) get() registry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reg
}

// Name returns the executor's name.
func (p *memberPort) Name() string { return p.name }

// AliveSince reports whether the executor name is alive as the same process since since
// (orchestrator.Cluster). Before this executor has joined, every executor counts as alive:
// nobody is judged dead by an executor that cannot tell yet.
func (p *memberPort) AliveSince(ctx context.Context, name string, since time.Time) (bool, error) {
	reg := p.get()
	if reg == nil {
		return true, nil
	}
	return reg.AliveSince(ctx, name, since)
}

// Steady reports whether this executor's own liveness has held for d without a lapse
// (orchestrator.Cluster); false before it has joined.
func (p *memberPort) Steady(ctx context.Context, d time.Duration) (bool, error) {
	reg := p.get()
	if reg == nil {
		return false, nil
	}
	return reg.Steady(ctx, d)
}

// errNotJoined is what the port answers before the executor has joined.
var errNotJoined = errors.New("server: this executor has not joined its store's executors yet")

// Members lists the executors of the registry, as the use cases want them.
func (p *memberPort) Members(ctx context.Context) ([]app.Member, error) {
	reg := p.get()
	if reg == nil {
		return nil, errNotJoined
	}
	list, err := reg.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]app.Member, len(list))
	for i, m := range list {
		out[i] = app.Member{Name: m.Name, Address: m.Address, Version: m.Version, StartedAt: m.StartedAt,
			LastHeartbeat: m.LastHeartbeat, Runs: m.Runs, Alive: m.Alive, Topology: m.Topology, Kinds: m.Kinds}
	}
	return out, nil
}

// version is this build's module version, "" when unknown (a development build).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "(devel)" {
		return ""
	}
	return info.Main.Version
}
