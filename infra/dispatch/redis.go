package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/rediskey"
)

// pushBatch is the most ids one push.lua call takes: a Push of up to pushBatch ids is one
// script call (one round trip) plus the SADD of the active set; a longer one is split, and
// each batch is atomic on its own.
const pushBatch = 10000

// RedisOptions configures a Redis dispatch queue.
type RedisOptions struct {
	// Prefix is the key prefix (keys are built by rediskey.New(Prefix)); "" means
	// "executor:".
	Prefix string
	// Logger receives the wake subscription's troubles; nil means slog.Default().
	Logger *slog.Logger
	// Scripter runs the done script (one per task, from the runs as they end); nil means the
	// client. The executor passes the client's AutoPipeline, so that the runs' ends share
	// round trips with their stage writes. Claims are made one at a time by one loop: they
	// go on the client, without the pipeline's flush delay.
	Scripter redis.Scripter
}

// Redis is the dispatch queue shared by every executor on one Redis: each plan's queue,
// in-flight set, limits and counters live in three keys of the plan's hash slot, and every
// change is one Lua script, so the limits hold plan-wide (see the package documentation).
//
// The client is not closed by the queue.
type Redis struct {
	client redis.UniversalClient
	hot    redis.Scripter // dones (RedisOptions.Scripter)
	keys   rediskey.Keys
	log    *slog.Logger
	woken  chan struct{}

	life    sync.Mutex // serialises Start and Stop
	started bool
	stopped bool
	ps      *redis.PubSub
	done    chan struct{} // closed when the wake reader has returned

	unsure unsure // plans taken out of executor:dispatching that may have work (prune.go)
}

// NewRedis returns a Redis dispatch queue on client. Its operations work at once; Start it to
// be woken by the other executors' changes.
func NewRedis(client redis.UniversalClient, opts RedisOptions) *Redis {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Scripter == nil {
		opts.Scripter = client
	}
	return &Redis{
		client: client,
		hot:    opts.Scripter,
		keys:   rediskey.New(opts.Prefix),
		log:    opts.Logger,
		woken:  make(chan struct{}, 1),
	}
}

// planKeys returns the plan's queue, in-flight and dispatch keys (one hash slot).
func (r *Redis) planKeys(planID string) []string {
	return []string{r.keys.DispatchQueue(planID), r.keys.DispatchInFlight(planID), r.keys.Dispatch(planID)}
}

// Woken signals (capacity 1, coalesced) that a task may have become claimable, on this
// executor or, once started, on any other one on the same Redis: a push, a task handed back,
// ended or released, an unpause.
func (r *Redis) Woken() <-chan struct{} { return r.woken }

// Push appends ids at the back of the plan's queue, in order, leaving out those queued or
// in flight already (and repeats within ids); stores lim (replacing the plan's limits),
// marks the plan active and wakes claimers. Up to 10,000 ids are one atomic script call;
// a longer Push is split into calls of 10,000, each atomic. The plan is marked active
// (executor:dispatching) after its queue is written.
//
// An error does not say that nothing was queued: a script whose reply was lost, or a batch or
// the mark that failed after earlier steps succeeded, leaves some ids queued. A caller must
// not queue them anywhere else on an error; it makes the same Push again once Redis answers
// (a Push is idempotent: ids queued or in flight are not added twice).
func (r *Redis) Push(ctx context.Context, planID string, lim Limits, ids []string) error {
	if err := checkPush(planID, lim, ids); err != nil {
		return err
	}
	keys := r.planKeys(planID)
	head := []any{lim.MaxConcurrency, lim.StartRate, lim.FailureBudget, r.keys.DispatchWake(), planID}
	for start := 0; start == 0 || start < len(ids); start += pushBatch {
		batch := ids[start:min(start+pushBatch, len(ids))]
		args := make([]any, 0, len(head)+len(batch))
		args = append(args, head...)
		for _, id := range batch {
			args = append(args, id)
		}
		if err := pushScript.Run(ctx, r.client, keys, args...).Err(); err != nil {
			return fmt.Errorf("dispatch: push %s: %w", planID, err)
		}
	}
	if err := r.client.SAdd(ctx, r.keys.Dispatching(), planID).Err(); err != nil {
		return fmt.Errorf("dispatch: push %s: mark active: %w", planID, err)
	}
	signal(r.woken)
	return nil
}

// Return hands a claimed task back: it leaves the in-flight set (its slot is freed, it does
// not count as a failure) and goes to the front of the queue. A task that is not in flight
// is left alone (a repeated Return queues it once). Wakes claimers.
func (r *Redis) Return(ctx context.Context, planID, taskID string) error {
	if err := checkIDs("return", planID, taskID); err != nil {
		return err
	}
	n, err := returnScript.Run(ctx, r.client, r.planKeys(planID), taskID, r.keys.DispatchWake(), planID).Int()
	if err != nil {
		return fmt.Errorf("dispatch: return %s/%s: %w", planID, taskID, err)
	}
	if n == 1 {
		signal(r.woken)
	}
	return nil
}

// Claim takes the front task for executor, atomically in Redis: ("", 0, nil) when the plan
// is paused, its queue is empty or MaxConcurrency tasks are in flight; ("", d, nil) when
// StartRate holds the start back for d (by Redis's clock); otherwise the task, now in flight
// for executor. An error (Redis unavailable) claims nothing that this caller learns of: a
// claim whose reply was lost stays in flight under executor's name (see the package
// documentation).
func (r *Redis) Claim(ctx context.Context, planID, executor string) (string, time.Duration, error) {
	ids, wait, err := r.ClaimN(ctx, planID, executor, 1)
	if len(ids) == 0 {
		return "", wait, err
	}
	return ids[0], 0, nil
}

// ClaimN is Claim of up to n tasks in one round trip (one for a paced plan), front first.
func (r *Redis) ClaimN(ctx context.Context, planID, executor string, n int) ([]string, time.Duration, error) {
	if err := checkIDs("claim", planID); err != nil {
		return nil, 0, err
	}
	res, err := claimScript.Run(ctx, r.client, r.planKeys(planID), executor, max(n, 1)).Slice()
	if err != nil {
		return nil, 0, fmt.Errorf("dispatch: claim %s: %w", planID, err)
	}
	if len(res) == 0 {
		return nil, 0, fmt.Errorf("dispatch: claim %s: unexpected reply %v", planID, res)
	}
	ms, _ := res[0].(int64)
	ids, err := strs(res[1:])
	if err != nil {
		return nil, 0, fmt.Errorf("dispatch: claim %s: %w", planID, err)
	}
	return ids, time.Duration(ms) * time.Millisecond, nil
}

// Done records that a claimed task's run ended: it leaves the in-flight set (a task not in
// flight counts nothing), and a failure counts toward the budget; a failure at or past the
// budget empties the queue and returns what it held, in order. left is what the plan has
// queued and in flight after the call. Wakes claimers when a slot was freed and something is
// queued.
func (r *Redis) Done(ctx context.Context, planID, taskID string, failed bool) ([]string, int, error) {
	drained, left, _, err := r.end(ctx, planID, taskID, failed, "")
	return drained, left, err
}

// DoneClaim is Done, then, in the same script, a claim of the plan's front task for
// executor when the plan lets one start now (not paused, not paced, a slot free): the
// worker whose run ended takes its next task without a claim of its own. next is "" when
// nothing was claimed.
func (r *Redis) DoneClaim(ctx context.Context, planID, taskID string, failed bool, executor string) ([]string, int, string, error) {
	return r.end(ctx, planID, taskID, failed, executor)
}

// end runs done.lua: Done, and DoneClaim when executor is not "".
func (r *Redis) end(ctx context.Context, planID, taskID string, failed bool, executor string) ([]string, int, string, error) {
	if err := checkIDs("done", planID, taskID); err != nil {
		return nil, 0, "", err
	}
	f := "0"
	if failed {
		f = "1"
	}
	res, err := doneScript.Run(ctx, r.hot, r.planKeys(planID), taskID, f, r.keys.DispatchWake(), planID, executor).Slice()
	if err != nil {
		return nil, 0, "", fmt.Errorf("dispatch: done %s/%s: %w", planID, taskID, err)
	}
	if len(res) != 4 {
		return nil, 0, "", fmt.Errorf("dispatch: done %s/%s: unexpected reply %v", planID, taskID, res)
	}
	left, _ := res[0].(int64)
	drained, err := strs(res[1])
	if err != nil {
		return nil, 0, "", fmt.Errorf("dispatch: done %s/%s: %w", planID, taskID, err)
	}
	if woke, _ := res[2].(int64); woke == 1 { // a slot freed with something to claim
		signal(r.woken)
	}
	next, _ := res[3].(string)
	return drained, int(left), next, nil
}

// SetPaused pauses (Claim takes nothing) or unpauses the plan; an unpause wakes claimers.
func (r *Redis) SetPaused(ctx context.Context, planID string, paused bool) error {
	if err := checkIDs("pause", planID); err != nil {
		return err
	}
	p := "0"
	if paused {
		p = "1"
	}
	keys := []string{r.keys.Dispatch(planID)}
	if err := pauseScript.Run(ctx, r.client, keys, p, r.keys.DispatchWake(), planID).Err(); err != nil {
		return fmt.Errorf("dispatch: pause %s: %w", planID, err)
	}
	if !paused {
		signal(r.woken)
	}
	return nil
}

// Remove takes ids out of the queue and returns those that were queued, in ids' order.
func (r *Redis) Remove(ctx context.Context, planID string, ids []string) ([]string, error) {
	if err := checkIDs("remove", planID); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	removed, err := removeScript.Run(ctx, r.client, []string{r.keys.DispatchQueue(planID)}, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("dispatch: remove %s: %w", planID, err)
	}
	return nilIfEmpty(removed), nil
}

// Drain empties the queue and returns what it held, in order.
func (r *Redis) Drain(ctx context.Context, planID string) ([]string, error) {
	if err := checkIDs("drain", planID); err != nil {
		return nil, err
	}
	ids, err := drainScript.Run(ctx, r.client, []string{r.keys.DispatchQueue(planID)}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("dispatch: drain %s: %w", planID, err)
	}
	return nilIfEmpty(ids), nil
}

// Release removes a task from the in-flight set without queueing or counting it (the slot
// of a dead executor's run) and reports whether it was in flight. A freed slot wakes
// claimers.
func (r *Redis) Release(ctx context.Context, planID, taskID string) (bool, error) {
	if err := checkIDs("release", planID, taskID); err != nil {
		return false, err
	}
	keys := r.planKeys(planID)
	n, err := releaseScript.Run(ctx, r.client, keys, taskID, r.keys.DispatchWake(), planID).Int()
	if err != nil {
		return false, fmt.Errorf("dispatch: release %s/%s: %w", planID, taskID, err)
	}
	if n == 1 {
		signal(r.woken)
	}
	return n == 1, nil
}

// InFlight returns the plan's claimed tasks by id, each with its executor and claim time
// (Redis's clock, to the millisecond).
func (r *Redis) InFlight(ctx context.Context, planID string) (map[string]InFlight, error) {
	if err := checkIDs("in-flight", planID); err != nil {
		return nil, err
	}
	raw, err := r.client.HGetAll(ctx, r.keys.DispatchInFlight(planID)).Result()
	if err != nil {
		return nil, fmt.Errorf("dispatch: in-flight %s: %w", planID, err)
	}
	out := make(map[string]InFlight, len(raw))
	for id, v := range raw {
		f, err := parseInFlight(v)
		if err != nil {
			return nil, fmt.Errorf("dispatch: in-flight %s/%s: %w", planID, id, err)
		}
		out[id] = f
	}
	return out, nil
}

// parseInFlight reads "<executor>|<claim unix ms>" (the executor's name may hold '|').
func parseInFlight(v string) (InFlight, error) {
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return InFlight{}, fmt.Errorf("malformed value %q", v)
	}
	ms, err := strconv.ParseInt(v[i+1:], 10, 64)
	if err != nil {
		return InFlight{}, fmt.Errorf("malformed value %q: %w", v, err)
	}
	return InFlight{Executor: v[:i], Since: time.UnixMilli(ms)}, nil
}

// Len returns how many of the plan's tasks are queued and in flight (read atomically).
func (r *Redis) Len(ctx context.Context, planID string) (queued, inflight int, err error) {
	if err := checkIDs("len", planID); err != nil {
		return 0, 0, err
	}
	var q, f *redis.IntCmd
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		q = p.ZCard(ctx, r.keys.DispatchQueue(planID))
		f = p.HLen(ctx, r.keys.DispatchInFlight(planID))
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("dispatch: len %s: %w", planID, err)
	}
	return int(q.Val()), int(f.Val()), nil
}

// hasWork reports, for each plan, whether it has a queue or an in-flight set (pipelined
// EXISTS, one per plan: both keys are in its slot).
func (r *Redis) hasWork(ctx context.Context, planIDs []string) ([]bool, error) {
	cmds := make([]*redis.IntCmd, len(planIDs))
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range planIDs {
			cmds[i] = p.Exists(ctx, r.keys.DispatchQueue(id), r.keys.DispatchInFlight(id))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dispatch: plans: %w", err)
	}
	out := make([]bool, len(planIDs))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
}

// strs reads a script's array of strings.
func strs(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("unexpected reply %v", v)
	}
	if len(arr) == 0 {
		return nil, nil
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("unexpected reply %v", v)
		}
		out[i] = s
	}
	return out, nil
}

// nilIfEmpty returns nil for an empty slice, as Memory does.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
