package batch_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/batch"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redistest"
)

var incr = redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)

// newScripter is a Scripter on a private redis-server, on a client configured as the
// executor's (1 s timeouts, one retry: a batch stuck on a frozen Redis fails within seconds).
func newScripter(t *testing.T, timeout time.Duration) (*redistest.Server, *batch.Scripter) {
	t.Helper()
	srv, _, s := newScripterWith(t, batch.Options{Timeout: timeout})
	return srv, s
}

// newScripterWith is newScripter with opts, and the client it runs on.
func newScripterWith(t testing.TB, opts batch.Options) (*redistest.Server, *redis.Client, *batch.Scripter) {
	t.Helper()
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second,
		WriteTimeout: time.Second, PoolTimeout: time.Second, MaxRetries: 1})
	t.Cleanup(func() { _ = client.Close() })
	s, err := batch.New(client, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return srv, client, s
}

// fullDuplex is the shared executor's pipeline: full-duplex, on one held connection.
func fullDuplex() *redis.AutoPipelineOptions {
	o := redis.DefaultBlockingAutoPipelineOptions()
	o.FullDuplex = true
	return o
}

// pipelines counts the pipelines a client sends (a go-redis hook).
type pipelines struct{ n atomic.Int64 }

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.n.Add(1)
		return next(ctx, cmds)
	}
}

// Gathered, the script calls of many goroutines go out together, each with its own reply.
func TestGatheredScriptsSharePipelines(t *testing.T) {
	t.Parallel()
	srv, client, s := newScripterWith(t, batch.Options{Timeout: time.Second, Pipeline: fullDuplex(), Gather: 50 * time.Millisecond})
	ctx := context.Background()
	require.NoError(t, incr.Load(ctx, srv.Client()).Err(), "the script is loaded: EVALSHA answers at once")
	count := &pipelines{}
	client.AddHook(count)

	const callers = 40
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			n, err := incr.Run(ctx, s, []string{"k"}, i+1).Int()
			assert.NoError(t, err, "caller %d", i)
			got[i] = n
		})
	}
	close(start)
	wg.Wait()
	total, err := srv.Client().Get(ctx, "k").Int()
	require.NoError(t, err)
	require.Equal(t, callers*(callers+1)/2, total, "every call ran once")
	seen := map[int]bool{}
	for i, n := range got {
		assert.GreaterOrEqual(t, n, i+1, "caller %d's own reply: the sum after its increment", i)
		assert.False(t, seen[n], "caller %d got another's reply %d", i, n)
		seen[n] = true
	}
	// 40 calls within one 50 ms window: a few pipelines, not one each.
	assert.Positive(t, count.n.Load())
	assert.LessOrEqual(t, count.n.Load(), int64(callers/4), "pipelines for %d calls", callers)

	// A script's own error comes back to its caller alone.
	err = s.Eval(ctx, `return redis.error_reply('NOPE refused')`, nil).Err()
	require.True(t, redis.HasErrorPrefix(err, "NOPE"), "%v", err)
	require.NoError(t, incr.Run(ctx, s, []string{"k"}, 1).Err())
}

// Scripts of many goroutines run on the pipeline and each gets its own reply; EVALSHA of a
// script Redis does not know yet falls back to EVAL (go-redis's Script.Run) through it.
func TestScriptsShareThePipeline(t *testing.T) {
	t.Parallel()
	srv, s := newScripter(t, time.Second)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := range 50 {
				n, err := incr.Run(ctx, s, []string{"k"}, 1).Int()
				assert.NoError(t, err, "goroutine %d call %d", g, i)
				assert.Positive(t, n)
			}
		})
	}
	wg.Wait()
	got, err := srv.Client().Get(ctx, "k").Int()
	require.NoError(t, err)
	require.Equal(t, 20*50, got)

	// A script's own error comes back as Redis's.
	err = s.Eval(ctx, `return redis.error_reply('NOPE refused')`, nil).Err()
	require.Error(t, err)
	require.False(t, outage.Is(err), "an answer is no outage")
	require.True(t, redis.HasErrorPrefix(err, "NOPE"))
}

// A frozen Redis costs a caller about the timeout, not the time it takes the queued batches
// to drain, and the error is an outage.
func TestAFrozenRedisCostsAtMostTheTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts batch.Options
	}{
		{"submitted", batch.Options{}},
		{"gathered", batch.Options{Pipeline: fullDuplex(), Gather: 20 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testFrozenRedis(t, tc.opts)
		})
	}
}

func testFrozenRedis(t *testing.T, opts batch.Options) {
	const timeout = 300 * time.Millisecond
	opts.Timeout = timeout
	srv, _, s := newScripterWith(t, opts)
	ctx := context.Background()
	require.NoError(t, incr.Run(ctx, s, []string{"k"}, 1).Err(), "the script is loaded")
	srv.Freeze()
	t.Cleanup(srv.Thaw)

	var wg sync.WaitGroup
	waits := make([]time.Duration, 30)
	errs := make([]error, len(waits))
	for i := range waits {
		wg.Go(func() {
			start := time.Now()
			errs[i] = incr.Run(ctx, s, []string{"k"}, 1).Err()
			waits[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, context.DeadlineExceeded, "call %d", i)
		require.True(t, outage.Is(err), "call %d: an unanswered call is an outage", i)
		// Between the timeout and one more slot of the clock, with room for a busy machine.
		assert.Less(t, waits[i], 3*timeout, "call %d waited %v", i, waits[i])
	}

	// A caller's earlier deadline ends its wait sooner.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := incr.Run(short, s, []string{"k"}, 1).Err()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), timeout, "the caller's 50 ms deadline")

	srv.Thaw()
	require.Eventually(t, func() bool { return incr.Run(ctx, s, []string{"k"}, 1).Err() == nil }, 10*time.Second, 20*time.Millisecond,
		"Redis answers again after the thaw")
}
