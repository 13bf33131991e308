package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/roundtrips"
	"github.com/executor-dev/executor/stagekind"
)

// target is what the measurements drive: an executor's use cases in-process (useCases) or a
// running serve's HTTP API (httpAPI). measurePlan, measureAccept and measureQueries run the
// same plans and queries through either.
type target interface {
	// submit submits the plan and returns its id.
	submit(ctx context.Context, s submission) (string, error)
	// waitPlan long-polls the plan once and returns its status, terminal or not.
	waitPlan(ctx context.Context, planID string) (plan.Status, error)
	// tenantTask reads the tenant's latest task.
	tenantTask(ctx context.Context, tenant string) error
	// cpuTime is the executor process's CPU time (user + system) so far.
	cpuTime(ctx context.Context) (time.Duration, error)
}

// submission is a bench plan: Stages stages named s1, s2, ... for every tenant, noop ones, or
// sleep ones of stageDuration when it is positive (the deployment shape).
type submission struct {
	name          string
	stages        int
	tenants       []string
	concurrency   int
	stageDuration time.Duration
}

// kind is the kind of the submission's stages and its params.
func (s submission) kind() (string, map[string]any) {
	if s.stageDuration > 0 {
		return stagekind.KindSleep, map[string]any{"duration": s.stageDuration.String()}
	}
	return stagekind.KindNoop, nil
}

// stageName is the name of the submission's i-th stage (from 0).
func stageName(i int) string { return fmt.Sprintf("s%d", i+1) }

// request is the submission as the use cases take it.
func (s submission) request() app.SubmitRequest {
	kind, params := s.kind()
	stages := make([]stage.Spec, s.stages)
	for i := range stages {
		stages[i] = stage.Spec{Name: stageName(i), Kind: kind, Params: params}
	}
	in := make([]app.TenantInput, len(s.tenants))
	for i, id := range s.tenants {
		in[i] = app.TenantInput{ID: id}
	}
	return app.SubmitRequest{Name: s.name, MaxConcurrency: s.concurrency, Stages: stages, Tenants: in}
}

// runner is one run's target and what it measures besides: the Redis INFO reads and the
// round-trip count, when they apply.
type runner struct {
	cfg    Config
	target target
	// tenantPrefix goes before every tenant id: "" in-process (the keys are the run's own),
	// "<run id>-" through the API (a serve's tenants outlive a run).
	tenantPrefix string
	redis        redis.UniversalClient // INFO reads; nil: no Redis measurements
	rts          []*roundtrips.Counter // one per in-process executor; none: round trips not counted
	// healthy fails when the run's measurements are not valid (Redis went away meanwhile).
	healthy func(context.Context) error
	close   func(context.Context) error // tears down what the run set up
}

func (r *runner) roundTrips() int64 {
	var n int64
	for _, rt := range r.rts {
		n += rt.Count()
	}
	return n
}

// useCases drives in-process executors through their use cases (app.Service): the first
// submits and waits, tenant queries go to each in turn.
type useCases struct {
	svcs []*app.Service
	next atomic.Uint32 // the executor the next tenant query goes to
}

func (u *useCases) submit(ctx context.Context, s submission) (string, error) {
	sub, err := u.svcs[0].Submit(ctx, s.request())
	if err != nil {
		return "", err
	}
	return sub.Plan.Plan.ID(), nil
}

func (u *useCases) waitPlan(ctx context.Context, planID string) (plan.Status, error) {
	v, err := u.svcs[0].WaitPlan(ctx, planID, app.MaxWait)
	if err != nil {
		return "", err
	}
	return v.Plan.Status(), nil
}

// running counts the plan's tasks RUNNING, as its summary has them.
func (u *useCases) running(ctx context.Context, planID string) (int, error) {
	v, err := u.svcs[0].Summary(ctx, planID)
	if err != nil {
		return 0, err
	}
	return v.Summary.Statuses[task.Running], nil
}

func (u *useCases) tenantTask(ctx context.Context, tenant string) error {
	i := int(u.next.Add(1)) % len(u.svcs)
	_, err := u.svcs[i].TenantTask(ctx, tenant)
	return err
}

// cpuTime is this process's CPU time: the executor's and the bench driver's.
func (*useCases) cpuTime(context.Context) (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("bench: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
