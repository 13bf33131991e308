// Package batch runs the executor's hot Redis scripts (task writes, fence bumps, leases,
// dispatch dones) on a go-redis AutoPipeliner, so that the commands of many concurrent runs
// share round trips, and bounds every wait for a reply: a Redis that does not answer (frozen,
// behind a network black hole) costs a caller at most Options.Timeout, never the time it
// takes the pipeline's queued batches to drain one by one.
//
// A wait that gives up leaves the command in its batch: it may still reach Redis and be
// executed (as any command whose reply was lost). Its caller gets an error wrapping
// context.DeadlineExceeded, which the outage monitor counts as Redis being away; the
// executor's writes are fenced and carry tokens, so a late execution is harmless.
package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultTimeout bounds a wait for a reply when Options.Timeout is zero: the client's read
// timeout, so a frozen Redis is noticed as fast on the pipeline as on a single command.
const DefaultTimeout = time.Second

// Options configure a Scripter.
type Options struct {
	// Timeout bounds each wait for a reply (default DefaultTimeout). A caller's context with
	// an earlier deadline bounds it sooner.
	Timeout time.Duration
	// Pipeline configures the AutoPipeliner (nil: go-redis's defaults for the async face).
	Pipeline *redis.AutoPipelineOptions
	// Gather, when positive, makes the script calls of all goroutines wait up to that long
	// for one another and go out together, as one pipeline (on a full-duplex pipeline, one
	// contiguous batch, written at once), instead of each on its own. The full-duplex
	// pipeline writes a lone command as soon as it comes: runs whose stages end spread over
	// time (slow stages) cost a write system call per command, and Redis a read and a reply
	// write per command, which gathering shares (docs/performance.md, issue 38). A batch is
	// also sent as soon as it holds 256 commands. Zero: each call is submitted at once.
	Gather time.Duration
}

// Scripter is a redis.Scripter whose script calls share round trips with those of other
// goroutines, each wait bounded. ScriptLoad and ScriptExists go to the client as they are.
type Scripter struct {
	client  redis.UniversalClient
	ap      *redis.AutoPipeliner
	timeout time.Duration
	clock   *clock
	gather  *gatherer
}

var _ redis.Scripter = (*Scripter)(nil)

// New returns a Scripter on client. Close releases its pipeline (not the client).
func New(client redis.UniversalClient, opts Options) (*Scripter, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	var ap *redis.AutoPipeliner
	var err error
	if opts.Pipeline == nil {
		ap, err = client.AsyncAutoPipeline()
	} else {
		ap, err = client.AsyncAutoPipelineWithOptions(opts.Pipeline)
	}
	if err != nil {
		return nil, fmt.Errorf("batch: auto-pipeline: %w", err)
	}
	sc := &Scripter{client: client, ap: ap, timeout: opts.Timeout, clock: newClock(opts.Timeout)}
	if opts.Gather > 0 {
		sc.gather = &gatherer{ap: ap, window: opts.Gather}
	}
	return sc, nil
}

// Close stops the pipeline: commands queued (or gathered) are sent, later ones fail.
func (s *Scripter) Close() error {
	if s.gather != nil {
		s.gather.flush()
	}
	if err := s.ap.Close(); err != nil {
		return fmt.Errorf("batch: close: %w", err)
	}
	return nil
}

// Eval runs EVAL on the pipeline.
func (s *Scripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return s.run(ctx, "eval", script, keys, args)
}

// EvalSha runs EVALSHA on the pipeline.
func (s *Scripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return s.run(ctx, "evalsha", sha1, keys, args)
}

// EvalRO runs EVAL_RO on the pipeline.
func (s *Scripter) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return s.run(ctx, "eval_ro", script, keys, args)
}

// EvalShaRO runs EVALSHA_RO on the pipeline.
func (s *Scripter) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return s.run(ctx, "evalsha_ro", sha1, keys, args)
}

// ScriptExists asks the client, outside the pipeline.
func (s *Scripter) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	return s.client.ScriptExists(ctx, hashes...)
}

// ScriptLoad asks the client, outside the pipeline.
func (s *Scripter) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	return s.client.ScriptLoad(ctx, script)
}

// run queues the command (or gathers it with others: Options.Gather) and waits for its reply,
// at most about s.timeout (or until ctx's deadline, when that is sooner).
func (s *Scripter) run(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := make([]any, 3, 3+len(keys)+len(args))
	cmdArgs[0], cmdArgs[1], cmdArgs[2] = name, script, len(keys)
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	var wctx context.Context = expiry{s.clock.expiry()}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= s.timeout {
		wctx = ctx
	}
	var err error
	if s.gather != nil {
		b := s.gather.add(cmd)
		select {
		case <-b.done:
			err = cmd.Err()
		case <-wctx.Done():
			err = wctx.Err()
		}
	} else {
		err = s.ap.Submit(ctx, cmd).WaitContext(wctx)
	}
	if err == nil || wctx.Err() == nil || !errors.Is(err, wctx.Err()) {
		return cmd // executed: its reply or Redis's error
	}
	// The batch may still fill cmd in: answer with a command of our own.
	out := redis.NewCmd(ctx, cmdArgs...)
	out.SetErr(fmt.Errorf("batch: %s: no reply in time (%v): %w", name, s.timeout, err))
	return out
}
