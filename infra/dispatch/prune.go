package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Taking a plan out of executor:dispatching (SREM) cannot be one step with looking at its
// queue: on a cluster the set and the plan's keys live in different slots. So a plan is taken
// out, its keys looked at again, and it is put back when work appeared meanwhile (a Push
// writes its queue before adding the plan). When that second look, or the SADD putting it
// back, fails (Redis away, a connection reset, a lost reply), the plan may have work and be
// out of the set, where no executor would claim its tasks: it is remembered as unsure and put
// back at the start of the next Plans, until Redis takes it. A plan put back with no work is
// taken out again by the Plans after.

// unsure is the set of plans this executor took out of executor:dispatching and could not
// check after.
type unsure struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// add remembers ids.
func (u *unsure) add(ids ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = make(map[string]struct{})
	}
	for _, id := range ids {
		u.ids[id] = struct{}{}
	}
}

// list returns the plans remembered, sorted.
func (u *unsure) list() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.ids))
	for id := range u.ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// forget drops ids once they are back in the set.
func (u *unsure) forget(ids []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range ids {
		delete(u.ids, id)
	}
}

// putBack adds the unsure plans to executor:dispatching again.
func (r *Redis) putBack(ctx context.Context) error {
	ids := r.unsure.list()
	if len(ids) == 0 {
		return nil
	}
	if err := r.client.SAdd(ctx, r.keys.Dispatching(), anys(ids)...).Err(); err != nil {
		return fmt.Errorf("dispatch: plans: put back %d plans taken out in doubt: %w", len(ids), err)
	}
	r.unsure.forget(ids)
	return nil
}

// anys converts ids to SADD/SREM members.
func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// Plans returns the active plans (those with queued or in-flight work), sorted, and takes
// the ones that have neither out of executor:dispatching. A plan is taken out with SREM and
// its keys looked at again after: one whose work appeared meanwhile is added back (a Push
// writes its queue before adding the plan, so no plan with work stays out: see unsure).
func (r *Redis) Plans(ctx context.Context) ([]string, error) {
	if err := r.putBack(ctx); err != nil {
		return nil, err
	}
	set := r.keys.Dispatching()
	ids, err := r.client.SMembers(ctx, set).Result()
	if err != nil {
		return nil, fmt.Errorf("dispatch: plans: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	work, err := r.hasWork(ctx, ids)
	if err != nil {
		return nil, err
	}
	var active, idle []string
	for i, id := range ids {
		if work[i] {
			active = append(active, id)
		} else {
			idle = append(idle, id)
		}
	}
	if len(idle) > 0 {
		back, err := r.prune(ctx, idle)
		if err != nil {
			return nil, err
		}
		active = append(active, back...)
	}
	slices.Sort(active)
	return active, nil
}

// prune takes idle out of executor:dispatching, then puts back and returns those whose work
// appeared meanwhile. On an error every one of idle is unsure (the SREM may have landed).
func (r *Redis) prune(ctx context.Context, idle []string) ([]string, error) {
	set := r.keys.Dispatching()
	back, err := func() ([]string, error) {
		if err := r.client.SRem(ctx, set, anys(idle)...).Err(); err != nil {
			return nil, fmt.Errorf("dispatch: plans: prune: %w", err)
		}
		again, err := r.hasWork(ctx, idle)
		if err != nil {
			return nil, err
		}
		var back []string
		for i, id := range idle {
			if again[i] {
				back = append(back, id)
			}
		}
		if len(back) > 0 {
			if err := r.client.SAdd(ctx, set, anys(back)...).Err(); err != nil {
				return nil, fmt.Errorf("dispatch: plans: re-add: %w", err)
			}
		}
		return back, nil
	}()
	if err != nil {
		r.unsure.add(idle...)
	}
	return back, err
}

// Close deletes the plan's dispatch keys (queue, in-flight set, limits and counters), then
// its active entry: the plan ended.
func (r *Redis) Close(ctx context.Context, planID string) error {
	if err := checkIDs("close", planID); err != nil {
		return err
	}
	closed, err := closeScript.Run(ctx, r.client, r.planKeys(planID)).Int()
	if err != nil {
		return fmt.Errorf("dispatch: close %s: %w", planID, err)
	}
	if closed == 0 {
		return nil // work arrived meanwhile: the plan stays
	}
	// A push between the script and the SREM wrote its queue before its SADD, which the SREM
	// may have undone: seen by prune, the entry goes back (or the plan is unsure).
	if _, err := r.prune(ctx, []string{planID}); err != nil {
		return fmt.Errorf("dispatch: close %s: %w", planID, err)
	}
	return nil
}
