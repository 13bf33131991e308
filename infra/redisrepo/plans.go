package redisrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/cas"
	"github.com/executor-dev/executor/infra/outage"
)

// Create writes the plan hash, its entry in the plans ZSET and its idempotency key in one
// round trip.
func (r *PlanRepo) createOnline(ctx context.Context, p *plan.Plan) error {
	s := r.s
	fields, err := planFields(p, p.CreatedAt())
	if err != nil {
		return wrap("encode plan", err)
	}
	if _, err = s.execScripts(ctx, func(pipe redis.Pipeliner) {
		s.queuePlan(ctx, pipe, p, base{version: unknownBase}, planStatusPairs, fields)
	}); err != nil {
		return wrap("create plan", err)
	}
	s.mirror.Plans().Put(p)
	return nil
}

// queuePlan queues the writes of a plan: its hash, its ZSET entry (trimming entries older
// than the TTL, whose plans expired) and its idempotency key. base is unknownBase for a new
// plan, else the version Redis held before this executor changed the plan while Redis was
// away (the write-back); the first statusPairs pairs of fields are the status fields. It
// returns create_plan.lua's command.
func (s *Store) queuePlan(ctx context.Context, pipe redis.Pipeliner, p *plan.Plan, b base, statusPairs int, fields []any) *redis.Cmd {
	// create_plan.lua: the whole hash if Redis has none, else the status fields if Redis
	// still holds the base version (or this executor's own write in doubt after it).
	args := append([]any{s.retentionOf(p), b.version, b.doubtList(s.writer), statusPairs, b.lost}, fields...)
	cmd := createPlanScript.EvalSha(ctx, pipe, []string{s.keys.Plan(p.ID())}, args...)
	// The listing drops the plans whose hash expired as it meets them (listOnline): a plan
	// active for longer than the retention stays listed.
	pipe.ZAdd(ctx, s.keys.Plans(), redis.Z{Score: float64(p.CreatedAt().UnixMilli()), Member: p.ID()})
	if k := p.IdempotencyKey(); k != "" {
		pipe.SetNX(ctx, s.keys.Idempotency(k), p.ID(), s.ttl)
	}
	return cmd
}

// Plan returns the plan with id as Redis holds it. Its immutable part (stage template, task
// ids) comes from the mirror when it has the plan, so only the status fields are read; a
// newer version than the mirror's is recorded there (an end another executor wrote lets the
// mirror drop the plan and its tasks' copies).
func (r *PlanRepo) planOnline(ctx context.Context, id string) (*plan.Plan, error) {
	s := r.s
	if cached, err := s.mirror.Plans().Plan(ctx, id); err == nil {
		vals, err := s.client.HMGet(ctx, s.keys.Plan(id), "status", "startedAt", "finishedAt", "phase", "version", "reason", "ring", "analysis",
			"decisions", "notices").Result()
		if err != nil {
			return nil, wrap("read plan", err)
		}
		if vals[0] == nil {
			if !cached.Status().Terminal() || time.Since(cached.FinishedAt()) < s.ttl {
				return nil, fmt.Errorf("redisrepo: plan %s: %w", id, outage.ErrDataLost)
			}
			return nil, plan.ErrNotFound // expired
		}
		st := plan.Standing{Status: plan.Status(vals[0].(string)), Phase: plan.Phase(str(vals[3])), Reason: str(vals[5])}
		if st.Ring, err = decRing(str(vals[6])); err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: ring: %w", id, err)
		}
		if st.Analysis, err = decAnalysis(str(vals[7])); err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: analysis: %w", id, err)
		}
		if st.Decisions, err = decRingDecisions(str(vals[8])); err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: decisions: %w", id, err)
		}
		if st.Notices, err = decNotices(str(vals[9])); err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: notices: %w", id, err)
		}
		if v := str(vals[4]); v != "" {
			if st.Version, err = strconv.ParseUint(v, 10, 64); err != nil {
				return nil, fmt.Errorf("redisrepo: decode plan %s: version: %w", id, err)
			}
		}
		if err := decTimes(map[string]string{"startedAt": str(vals[1]), "finishedAt": str(vals[2])},
			map[string]*time.Time{"startedAt": &st.StartedAt, "finishedAt": &st.FinishedAt}); err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: %w", id, err)
		}
		p, err := cached.Restand(st)
		if err != nil {
			return nil, fmt.Errorf("redisrepo: decode plan %s: %w", id, err)
		}
		if p.Version() > cached.Version() && !s.writing.has(id) {
			// A slow read never undoes a change recorded since, nor one journaled (PutIfNewer).
			s.mirror.Plans().PutIfNewer(p)
			if p.Status().Terminal() && !cached.Status().Terminal() {
				s.refreshEndedCopies(ctx, p)
			}
		}
		return p, nil
	}
	h, err := s.client.HGetAll(ctx, s.keys.Plan(id)).Result()
	if err != nil {
		return nil, wrap("read plan", err)
	}
	if len(h) == 0 {
		return nil, plan.ErrNotFound
	}
	p, err := decodePlan(h)
	if err != nil {
		return nil, fmt.Errorf("redisrepo: decode plan %s: %w", id, err)
	}
	if !s.writing.has(id) {
		s.mirror.Plans().PutIfNewer(p) // a read: cached, not kept
	}
	return p, nil
}

// stages returns a plan's stage template, which never changes: from the mirror, or Redis.
func (s *Store) stages(ctx context.Context, planID string) ([]stage.Spec, error) {
	if p, err := s.mirror.Plans().Plan(ctx, planID); err == nil {
		return p.Stages(), nil
	}
	if specs, ok := s.specs.get(planID); ok {
		return specs, nil
	}
	// Only the stage template: the whole hash of a big plan holds every task id (10,000
	// tenants: about 300 KB, read and decoded for each task read).
	raw, err := s.client.HGet(ctx, s.keys.Plan(planID), "spec").Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", plan.ErrNotFound, planID)
	}
	if err != nil {
		return nil, wrap("read plan's stages", err)
	}
	specs, err := decSpecs([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("redisrepo: plan %s: spec: %w", planID, err)
	}
	s.specs.put(planID, specs)
	return specs, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// ByIdempotencyKey returns the plan first submitted with key (by any executor).
func (r *PlanRepo) byIdempotencyKeyOnline(ctx context.Context, key string) (*plan.Plan, error) {
	id, err := r.s.client.Get(ctx, r.s.keys.Idempotency(key)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, plan.ErrNotFound
	}
	if err != nil {
		return nil, wrap("read idempotency key", err)
	}
	return r.planOnline(ctx, id)
}

// listingGrace is how old a plan's listing entry must be before a listing that finds no plan
// hash drops it: younger, the plan may be being created.
const listingGrace = 10 * time.Minute

// List returns plans matching f, newest first, from the plans ZSET (so plans created by other
// instances are listed too), examining at most f.Scan plans (f.Resume). With a status or
// labels, each page of the ZSET is first narrowed by one pipelined read of those fields, so
// only the plans that may match are read whole. Plans whose hash expired are dropped from
// the ZSET.
func (r *PlanRepo) listOnline(ctx context.Context, f plan.Filter) ([]*plan.Plan, error) {
	s := r.s
	max := "+inf"
	if f.Before != "" {
		u, err := ulid.ParseStrict(f.Before)
		if err != nil {
			return nil, fmt.Errorf("%w: cursor is not a ULID", plan.ErrInvalid)
		}
		max = strconv.FormatUint(u.Time(), 10)
	}
	const page = 256
	var out []*plan.Plan
	scanned, last := 0, ""
	for offset := int64(0); ; offset += page {
		entries, err := s.client.ZRevRangeByScoreWithScores(ctx, s.keys.Plans(), &redis.ZRangeBy{
			Max: max, Min: "-inf", Offset: offset, Count: page,
		}).Result()
		if err != nil {
			return nil, wrap("list plans", err)
		}
		// The ZSET may hold more when the page is full; the entries of the cursor's millisecond
		// that are not older than it are not the listing's.
		more := len(entries) == page
		if f.Before != "" {
			entries = slices.DeleteFunc(entries, func(e redis.Z) bool { return str(e.Member) >= f.Before })
		}
		maybe, err := r.mayMatch(ctx, f, entries)
		if err != nil {
			return nil, err
		}
		for i, e := range entries {
			if f.Scan > 0 && scanned == f.Scan {
				if f.Resume != nil {
					*f.Resume = last
				}
				return out, nil
			}
			scanned, last = scanned+1, str(e.Member)
			if !maybe[i] {
				continue
			}
			p, err := r.listed(ctx, e)
			if err != nil {
				return nil, err
			}
			if p == nil || !f.Matches(p) {
				continue
			}
			out = append(out, p)
			if f.Limit > 0 && len(out) == f.Limit {
				return out, nil
			}
		}
		if !more {
			return out, nil
		}
	}
}

// listed reads the plan of a listing entry; nil when its hash expired. The entry of an expired
// plan is dropped (best effort: the listing heals itself), unless it is young: a plan being
// created (on a Redis Cluster its entry and its hash are written to two masters at once,
// either first) is left listed.
func (r *PlanRepo) listed(ctx context.Context, e redis.Z) (*plan.Plan, error) {
	id := str(e.Member)
	p, err := r.planOnline(ctx, id)
	if errors.Is(err, plan.ErrNotFound) {
		if time.Since(time.UnixMilli(int64(e.Score))) > listingGrace {
			r.s.client.ZRem(ctx, r.s.keys.Plans(), id)
		}
		return nil, nil
	}
	return p, err
}

// mayMatch tells, for each listing entry, whether its plan may match f's status and labels,
// from one pipelined read of those two fields of every plan: false only for a plan that
// cannot; true for every plan when f has neither, and for a plan whose hash is gone (listed
// says what becomes of it).
func (r *PlanRepo) mayMatch(ctx context.Context, f plan.Filter, entries []redis.Z) ([]bool, error) {
	out := make([]bool, len(entries))
	if f.Status == "" && len(f.Labels) == 0 {
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	s := r.s
	cmds := make([]*redis.SliceCmd, len(entries))
	if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, e := range entries {
			cmds[i] = pipe.HMGet(ctx, s.keys.Plan(str(e.Member)), "status", "labels")
		}
	}); err != nil {
		return nil, wrap("list plans", err)
	}
	for i, cmd := range cmds {
		vals, err := cmd.Result()
		if err != nil {
			return nil, wrap("list plans", err)
		}
		status, ok := vals[0].(string)
		if !ok {
			out[i] = true // gone, or being created: listed decides
			continue
		}
		var labels map[string]string
		if raw, _ := vals[1].(string); raw != "" && json.Unmarshal([]byte(raw), &labels) != nil {
			out[i] = true // not ours to judge: the plan's own decoding reports it
			continue
		}
		out[i] = (f.Status == "" || plan.Status(status) == f.Status) && f.MatchesLabels(labels)
	}
	return out, nil
}

// Save writes a plan's status fields (save_plan.lua, one round trip): a compare-and-set on p's
// version (plan.ErrConflict when another writer changed the plan since p was read). On
// success p carries the new version. A plan that ends gives its keys the retention; an ended
// plan that is active again takes it back (retention.go). Before a plan's end is written, the
// index rows this executor deferred are.
func (r *PlanRepo) saveOnline(ctx context.Context, p *plan.Plan, token string) error {
	s := r.s
	if p.Status().Terminal() {
		s.index.flush() // the rows of its tasks' ends that this executor deferred: before it reads ended
	}
	ttl := s.retentionOf(p)
	args := append([]any{ttl, p.Version(), token}, planStatusFields(p, time.Now())...)
	n, err := savePlanScript.Run(ctx, s.client, []string{s.keys.Plan(p.ID())}, args...).Int()
	if err != nil {
		s.back.inDoubt(p.ID(), token)
		return wrap("save plan", err)
	}
	switch n {
	case 0:
		return plan.ErrNotFound
	case conflict:
		return fmt.Errorf("redisrepo: save plan %s: %w", p.ID(), plan.ErrConflict)
	case behind:
		s.watch.rollback.Store(true) // the other executors must learn of it too
		return fmt.Errorf("redisrepo: save plan %s: Redis holds an older version than %d: %w", p.ID(), p.Version(), outage.ErrDataLost)
	}
	p.Stored(p.Version() + 1)
	s.mirror.Plans().Put(p)
	if len(p.Notify()) > 0 && len(p.Notices()) > 0 { // its notices to deliver: best effort (Deliveries' rescan)
		_ = s.client.SAdd(ctx, s.keys.Notifying(), p.ID()).Err()
	}
	if p.Status().Terminal() {
		s.refreshEndedCopies(ctx, p) // its tasks ended; those this executor did not run, elsewhere
	}
	if ttl > 0 || n == reopened {
		if err := s.retain(ctx, p, ttl); err != nil {
			// The plan is saved; its tasks' keys keep the TTLs they had (none while it ran).
			s.log.Warn("plan's keys not given their retention", "plan_id", p.ID(), "ttl_s", ttl, "err", err)
		}
	}
	return nil
}

// updateOnline reads the plan from Redis, applies fn and saves it; on a conflict it reads
// again and applies fn again.
func (r *PlanRepo) updateOnline(ctx context.Context, id string, fn func(p *plan.Plan) error) (*plan.Plan, error) {
	return cas.Update(func() (*plan.Plan, error) { return r.planOnline(ctx, id) }, fn,
		func(p *plan.Plan) error { return r.saveOnline(ctx, p, r.s.token()) }, plan.ErrConflict)
}

// refreshEndedCopies reads again from Redis the copies the mirror holds, still not ended, of
// the tasks of p, a plan that ended (this executor ended it, or read it ended): this executor
// may have accepted the plan (it holds every task as it created it) while others ran its
// tasks. Their ends, not the stale copies,
// are then what it holds, and what it writes back should Redis lose its data. Best effort:
// a copy not read again stays, stale, until it leaves the cache.
func (s *Store) refreshEndedCopies(ctx context.Context, p *plan.Plan) {
	var stale []string
	for _, id := range p.TaskIDs() {
		if t, err := s.mirror.Tasks().Task(ctx, id); err == nil && !t.Status().Terminal() {
			stale = append(stale, id)
		}
	}
	if len(stale) == 0 {
		return
	}
	if _, err := s.Tasks().byIDsOnline(ctx, stale); err != nil {
		s.log.Debug("read again the tasks of a plan another executor ended", "plan_id", p.ID(), "err", err)
	}
}
