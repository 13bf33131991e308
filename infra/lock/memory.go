package lock

import (
	"time"

	"context"
	"fmt"
	"sync"

	"github.com/executor-dev/executor/domain/lease"
)

// Memory is an in-process tenant locker. Its leases never expire; they end on Release, or on
// ForceRelease.
type Memory struct {
	mu   sync.Mutex
	held map[string]*MemoryLease
}

// NewMemory returns an empty in-process locker.
func NewMemory() *Memory { return &Memory{held: map[string]*MemoryLease{}} }

// MemoryLease is a lease held in a Memory locker.
type MemoryLease struct {
	m      *Memory
	tenant string
	owner  string
	loss   *loss
}

// Acquire takes tenantID's lease for owner, or returns lease.ErrHeld.
func (m *Memory) Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.held[tenantID]; ok {
		return nil, fmt.Errorf("lock: %s held by %s: %w", tenantID, h.owner, lease.ErrHeld)
	}
	l := &MemoryLease{m: m, tenant: tenantID, owner: owner, loss: newLoss()}
	m.held[tenantID] = l
	return l, nil
}

// Holder reports who holds tenantID's lease.
func (m *Memory) Holder(_ context.Context, tenantID string) (lease.Holder, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.held[tenantID]
	if !ok {
		return lease.Holder{}, false, nil
	}
	return lease.Holder{Owner: l.owner}, true, nil
}

// Release gives the lease up.
func (l *MemoryLease) Release(context.Context) error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.m.held[l.tenant] == l {
		delete(l.m.held, l.tenant)
	}
	return nil
}

// Lost is closed when ForceRelease removes the lease; nothing else loses an in-process lease.
func (l *MemoryLease) Lost() <-chan struct{} { return l.loss.lost() }

// AfterLost runs f once ForceRelease removes the lease (see lease.Lease).
func (l *MemoryLease) AfterLost(f func()) (stop func() bool) { return l.loss.after(f) }

// Deadline is zero: an in-process lease does not expire.
func (l *MemoryLease) Deadline() time.Time { return time.Time{} }
