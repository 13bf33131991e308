package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Member is one executor as the member registry reports it.
type Member struct {
	Name          string
	Address       string
	Version       string // "" when unknown
	StartedAt     time.Time
	LastHeartbeat time.Time
	Runs          int  // tasks it was running at its last heartbeat (every lease TTL/3); this executor's: now
	Alive         bool // its liveness key exists
	// Topology is how it was started: "shared" (several executors on the Redis) or "alone".
	Topology string
	// Kinds are the stage kinds it can run; nil when it did not say.
	Kinds []string
}

// Members is the registry of the executors sharing this one's store (infra/members, through
// the server's wiring).
type Members interface {
	// Name returns the serving executor's name.
	Name() string
	// Members returns every registered executor, alive or not.
	Members(ctx context.Context) ([]Member, error)
}

// ExecutorView is one executor of the cluster as listed: Self marks the one serving the request.
type ExecutorView struct {
	Member
	Self bool
}

// Executors lists the executors sharing this one's store, sorted by name. Without a
// registry (Deps.Members nil) the list is empty. A registry that cannot answer (Redis away)
// is ErrMembersUnavailable.
func (s *Service) Executors(ctx context.Context) ([]ExecutorView, error) {
	if s.members == nil {
		return []ExecutorView{}, nil
	}
	list, err := s.members.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMembersUnavailable, err)
	}
	self := s.members.Name()
	out := make([]ExecutorView, len(list))
	for i, m := range list {
		out[i] = ExecutorView{Member: m, Self: m.Name == self}
	}
	slices.SortFunc(out, func(a, b ExecutorView) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// kindsElsewhere returns, when a stage of req names a kind this executor lacks, the kinds the
// live executors sharing its store run (nil otherwise: no registry is asked). A registry that
// cannot answer is ErrMembersUnavailable: a kind is not judged unknown for it.
func (s *Service) kindsElsewhere(ctx context.Context, req SubmitRequest) (map[string]bool, error) {
	missing := false
	for _, sp := range req.Stages {
		if _, ok := s.kinds.Handler(sp.Kind); sp.Kind != "" && !ok {
			missing = true
		}
	}
	if !missing || s.members == nil {
		return nil, nil
	}
	list, err := s.members.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMembersUnavailable, err)
	}
	out := map[string]bool{}
	for _, m := range list {
		if !m.Alive {
			continue
		}
		for _, k := range m.Kinds {
			out[k] = true
		}
	}
	return out, nil
}

// knownKinds lists, sorted, the kinds of local and of elsewhere.
func knownKinds(local []string, elsewhere map[string]bool) []string {
	all := slices.Clone(local)
	for k := range elsewhere {
		if !slices.Contains(all, k) {
			all = append(all, k)
		}
	}
	slices.Sort(all)
	return all
}
