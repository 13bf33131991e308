package members

import (
	"context"
	"sync"
	"time"
)

// Memory is the registry of an executor on the embedded in-memory store: nothing is shared,
// so it lists this executor alone.
type Memory struct {
	opts Options

	mu        sync.Mutex
	startedAt time.Time
	started   bool
	stopped   bool
}

// NewMemory returns the registry of the executor opts.Name (only Name, Address, Version and
// Runs are used).
func NewMemory(opts Options) (*Memory, error) {
	if err := CheckName(opts.Name); err != nil {
		return nil, err
	}
	return &Memory{opts: opts.withDefaults()}, nil
}

// Name returns this executor's name.
func (m *Memory) Name() string { return m.opts.Name }

// Start marks this executor alive. It never fails; ctx is not used.
func (m *Memory) Start(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		m.started, m.startedAt = true, time.Now().UTC()
	}
	return nil
}

// Stop marks this executor stopped: it lists nothing any more. It never fails.
func (m *Memory) Stop(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	return nil
}

// alive reports whether this executor runs.
func (m *Memory) alive() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.started && !m.stopped
}

// Alive reports whether name is this executor's and it runs.
func (m *Memory) Alive(_ context.Context, name string) (bool, error) {
	return name == m.opts.Name && m.alive(), nil
}

// AliveSince reports whether name is this executor's and it has run since at least since.
func (m *Memory) AliveSince(_ context.Context, name string, since time.Time) (bool, error) {
	m.mu.Lock()
	started := m.startedAt
	m.mu.Unlock()
	return name == m.opts.Name && m.alive() && !started.After(since), nil
}

// Steady reports whether this executor runs: alone in its process, its liveness never lapses.
func (m *Memory) Steady(context.Context, time.Duration) (bool, error) { return m.alive(), nil }

// List returns this executor, heartbeating now, while it runs; nothing before Start and
// after Stop.
func (m *Memory) List(context.Context) ([]Member, error) {
	if !m.alive() {
		return []Member{}, nil
	}
	m.mu.Lock()
	startedAt := m.startedAt
	m.mu.Unlock()
	return []Member{{Name: m.opts.Name, Address: m.opts.Address, Version: m.opts.Version, StartedAt: startedAt,
		LastHeartbeat: time.Now().UTC(), Runs: m.opts.Runs(), Alive: true, Topology: m.opts.Topology, Kinds: m.opts.Kinds}}, nil
}
