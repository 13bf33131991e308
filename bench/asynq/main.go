// Command asynqbench measures the throughput and CPU cost of asynq (github.com/hibiken/asynq)
// processing noop tasks on a given Redis, as a yardstick for the executor's own bench
// (executor bench). It lives in its own Go module so that asynq never becomes a dependency of
// the executor.
//
// It runs two phases on one queue, "default":
//
//  1. enqueue: --tasks tasks of type "noop" (payload --payload bytes) are enqueued with one
//     asynq.Client shared by --enqueuers goroutines, timed on their own;
//  2. process: an asynq.Server with asynq's defaults (one queue, no StrictPriority) and
//     --concurrency workers runs a handler that only returns nil. The phase is timed from
//     Server.Start until the handler has run --tasks times (an atomic counter) and the queue's
//     active list is empty again (every task's Done script has run), then the server is shut
//     down.
//
// Around the process phase it snapshots Redis INFO cpu and INFO commandstats and this process's
// CPU time (getrusage RUSAGE_SELF), and reports per task: this process's CPU (the asynq server),
// Redis's CPU, and the Redis commands run (commandstats counts the commands run inside Lua
// scripts as well as the EVALSHA that runs them), with the top 10 commands. The few INFO and
// LLEN calls the bench makes itself are included and negligible.
//
// At the end it deletes the keys matching asynq:* (SCAN + DEL), and only those, so runs do not
// accumulate. It refuses to start when such keys already exist, since they are not its own.
//
// Usage:
//
//	asynqbench --redis redis://127.0.0.1:16400/0 --tasks 100000 --concurrency 100 [-o json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// taskType is the type name of every task the bench enqueues.
const taskType = "noop"

// queueName is the one queue the bench uses: asynq's default queue.
const queueName = "default"

// keyPattern matches every key asynq writes; the bench deletes these, and only these, at the end.
const keyPattern = "asynq:*"

// activeKey is asynq's list of the tasks of queueName being processed (asynq:{<queue>}:active).
const activeKey = "asynq:{" + queueName + "}:active"

// config holds the command-line flags.
type config struct {
	RedisURL    string        `json:"redisUrl"`
	Tasks       int           `json:"tasks"`
	Concurrency int           `json:"concurrency"`
	Payload     int           `json:"payloadBytes"`
	Enqueuers   int           `json:"enqueuers"`
	PoolSize    int           `json:"poolSize"` // asynq's Redis pool size; 0 = go-redis's default (10 × GOMAXPROCS)
	Timeout     time.Duration `json:"timeout"`
	Output      string        `json:"-"`
}

// commandCount is one Redis command and how often it ran during the process phase.
type commandCount struct {
	Command     string  `json:"command"`
	Calls       int64   `json:"calls"`
	PerTask     float64 `json:"perTask"`
	UsecPerCall float64 `json:"usecPerCall"` // Redis's own time per call (commandstats usec); a script's includes its commands'
}

// result is what the bench reports.
type result struct {
	AsynqVersion string `json:"asynqVersion"`
	RedisVersion string `json:"redisVersion"`
	GoMaxProcs   int    `json:"gomaxprocs"`
	Config       config `json:"config"`

	EnqueueMs          float64 `json:"enqueueMs"`
	EnqueueTasksPerSec float64 `json:"enqueueTasksPerSec"`

	ProcessMs   float64 `json:"processMs"`   // Server.Start to the last task done
	TasksPerSec float64 `json:"tasksPerSec"` // processing phase only

	// CPU per task over the processing phase.
	AsynqCPUUsPerTask           float64        `json:"asynqCpuUsPerTask"`           // this process: the asynq server
	RedisCPUUsPerTask           float64        `json:"redisCpuUsPerTask"`           // used_cpu_sys + used_cpu_user
	RedisMainThreadCPUUsPerTask float64        `json:"redisMainThreadCpuUsPerTask"` // the _main_thread variants; 0 if Redis lacks them
	RedisCommandsPerTask        float64        `json:"redisCommandsPerTask"`        // commandstats calls delta / tasks
	RedisScriptCallsPerTask     float64        `json:"redisScriptCallsPerTask"`     // eval, evalsha, fcall: about the round trips per task
	TopCommands                 []commandCount `json:"topCommands"`                 // top 10 by calls delta

	// Enqueue phase, for reference: this process's CPU (the asynq client) and Redis's.
	EnqueueCPUUsPerTask      float64 `json:"enqueueCpuUsPerTask"`
	EnqueueRedisCPUUsPerTask float64 `json:"enqueueRedisCpuUsPerTask"`

	// Both phases together: tasks / (enqueue + process wall time).
	EndToEndTasksPerSec float64 `json:"endToEndTasksPerSec"`

	KeysDeleted int64 `json:"keysDeleted"`
}

// redisSnapshot is Redis's CPU time and command counts at one instant.
type redisSnapshot struct {
	CPU           float64          // used_cpu_sys + used_cpu_user, seconds
	MainThreadCPU float64          // used_cpu_sys_main_thread + used_cpu_user_main_thread, seconds
	HasMainThread bool             // Redis reports the _main_thread variants
	Calls         map[string]int64 // commandstats calls per command
	Usec          map[string]int64 // commandstats usec per command
	Version       string           // redis_version
}

// noopLogger is an asynq.Logger that discards everything, so asynq's logging costs nothing.
type noopLogger struct{}

// Debug discards its arguments.
func (noopLogger) Debug(...interface{}) {}

// Info discards its arguments.
func (noopLogger) Info(...interface{}) {}

// Warn discards its arguments.
func (noopLogger) Warn(...interface{}) {}

// Error discards its arguments.
func (noopLogger) Error(...interface{}) {}

// Fatal exits with status 1, as asynq expects of a Logger.
func (noopLogger) Fatal(args ...interface{}) {
	fmt.Fprintln(os.Stderr, append([]interface{}{"asynq fatal:"}, args...)...)
	os.Exit(1)
}

// main parses the flags, runs the bench and prints its result.
func main() {
	var cfg config
	flag.StringVar(&cfg.RedisURL, "redis", "redis://127.0.0.1:6379/0", "Redis URL, redis://[user:pass@]host:port/db")
	flag.IntVar(&cfg.Tasks, "tasks", 100000, "noop tasks to enqueue and process")
	flag.IntVar(&cfg.Concurrency, "concurrency", 100, "asynq server concurrency (workers)")
	flag.IntVar(&cfg.Payload, "payload", 0, "payload bytes per task")
	flag.IntVar(&cfg.Enqueuers, "enqueuers", 32, "goroutines enqueuing at once")
	flag.IntVar(&cfg.PoolSize, "pool-size", 0, "Redis connection pool size of asynq's client and server; 0: go-redis's default (10 × GOMAXPROCS)")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up when the whole run takes longer")
	flag.StringVar(&cfg.Output, "o", "table", "output: table or json")
	flag.Parse()
	if err := validate(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "asynqbench:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	res, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asynqbench:", err)
		os.Exit(1)
	}
	if cfg.Output == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "asynqbench:", err)
			os.Exit(1)
		}
		return
	}
	printTable(os.Stdout, res)
}

// validate checks the flags.
func validate(cfg config) error {
	switch {
	case cfg.Tasks < 1:
		return errors.New("--tasks must be at least 1")
	case cfg.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case cfg.Payload < 0:
		return errors.New("--payload must not be negative")
	case cfg.Enqueuers < 1:
		return errors.New("--enqueuers must be at least 1")
	case cfg.PoolSize < 0:
		return errors.New("--pool-size must not be negative")
	case cfg.Output != "table" && cfg.Output != "json":
		return fmt.Errorf("-o must be table or json, not %q", cfg.Output)
	}
	return nil
}

// run enqueues the tasks, processes them with an asynq.Server, measures both phases and deletes
// asynq's keys.
func run(ctx context.Context, cfg config) (res result, err error) {
	res = result{AsynqVersion: asynqVersion(), GoMaxProcs: runtime.GOMAXPROCS(0), Config: cfg}

	connOpt, err := asynq.ParseRedisURI(cfg.RedisURL)
	if err != nil {
		return res, err
	}
	if cfg.PoolSize > 0 {
		opt, ok := connOpt.(asynq.RedisClientOpt)
		if !ok {
			return res, errors.New("--pool-size needs a redis:// or rediss:// URL")
		}
		opt.PoolSize = cfg.PoolSize
		connOpt = opt
	}
	redisOpt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return res, err
	}
	rdb := redis.NewClient(redisOpt) // the bench's own connection: INFO, LLEN, SCAN, DEL
	defer rdb.Close()

	existing, err := countKeys(ctx, rdb)
	if err != nil {
		return res, err
	}
	if existing > 0 {
		return res, fmt.Errorf("%d keys matching %s already exist in this Redis database; the bench deletes asynq's keys when it ends, so it runs only where there are none (FLUSHDB, or delete them)", existing, keyPattern)
	}
	defer func() {
		// Delete asynq's keys even if the run failed or was interrupted.
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		n, derr := deleteKeys(cctx, rdb)
		res.KeysDeleted = n
		if err == nil && derr != nil {
			err = fmt.Errorf("delete %s: %w", keyPattern, derr)
		}
	}()

	// Phase 1: enqueue.
	cpu0 := processCPU()
	r0, err := snapshotRedis(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.RedisVersion = r0.Version
	enqueueDur, err := enqueue(ctx, connOpt, cfg)
	if err != nil {
		return res, err
	}
	cpu1 := processCPU()
	r1, err := snapshotRedis(ctx, rdb)
	if err != nil {
		return res, err
	}
	n := float64(cfg.Tasks)
	res.EnqueueMs = ms(enqueueDur)
	res.EnqueueTasksPerSec = n / enqueueDur.Seconds()
	res.EnqueueCPUUsPerTask = (cpu1 - cpu0).Seconds() * 1e6 / n
	res.EnqueueRedisCPUUsPerTask = (r1.CPU - r0.CPU) * 1e6 / n

	// Phase 2: process.
	r2, err := snapshotRedis(ctx, rdb)
	if err != nil {
		return res, err
	}
	cpu2 := processCPU()
	processDur, err := process(ctx, connOpt, rdb, cfg)
	if err != nil {
		return res, err
	}
	cpu3 := processCPU()
	r3, err := snapshotRedis(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.ProcessMs = ms(processDur)
	res.TasksPerSec = n / processDur.Seconds()
	res.AsynqCPUUsPerTask = (cpu3 - cpu2).Seconds() * 1e6 / n
	res.RedisCPUUsPerTask = (r3.CPU - r2.CPU) * 1e6 / n
	if r2.HasMainThread && r3.HasMainThread {
		res.RedisMainThreadCPUUsPerTask = (r3.MainThreadCPU - r2.MainThreadCPU) * 1e6 / n
	}
	var total, scripts int64
	for cmd, calls := range r3.Calls {
		d := calls - r2.Calls[cmd]
		if d <= 0 {
			continue
		}
		total += d
		switch cmd {
		case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
			scripts += d
		}
		usec := float64(r3.Usec[cmd] - r2.Usec[cmd])
		res.TopCommands = append(res.TopCommands, commandCount{Command: cmd, Calls: d, PerTask: float64(d) / n, UsecPerCall: usec / float64(d)})
	}
	sort.Slice(res.TopCommands, func(i, j int) bool {
		a, b := res.TopCommands[i], res.TopCommands[j]
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Command < b.Command
	})
	if len(res.TopCommands) > 10 {
		res.TopCommands = res.TopCommands[:10]
	}
	res.RedisCommandsPerTask = float64(total) / n
	res.RedisScriptCallsPerTask = float64(scripts) / n
	res.EndToEndTasksPerSec = n / (enqueueDur + processDur).Seconds()
	return res, nil
}

// enqueue enqueues cfg.Tasks noop tasks into queueName from cfg.Enqueuers goroutines sharing
// one asynq.Client and returns how long that took.
func enqueue(ctx context.Context, connOpt asynq.RedisConnOpt, cfg config) (time.Duration, error) {
	client := asynq.NewClient(connOpt)
	defer client.Close()
	payload := []byte(strings.Repeat("x", cfg.Payload))

	var (
		next     atomic.Int64 // tasks claimed by the goroutines
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	for range cfg.Enqueuers {
		wg.Go(func() {
			for next.Add(1) <= int64(cfg.Tasks) {
				_, err := client.EnqueueContext(ctx, asynq.NewTask(taskType, payload), asynq.Queue(queueName))
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("enqueue: %w", err) })
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}

// process starts an asynq.Server with cfg.Concurrency workers and a noop handler, and returns
// the time from Server.Start until the handler has run cfg.Tasks times and the active list is
// empty, i.e. every task has been marked done in Redis. It shuts the server down before it
// returns.
func process(ctx context.Context, connOpt asynq.RedisConnOpt, rdb *redis.Client, cfg config) (time.Duration, error) {
	var handled atomic.Int64
	done := make(chan struct{})
	handler := asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		if handled.Add(1) == int64(cfg.Tasks) {
			close(done)
		}
		return nil
	})
	srv := asynq.NewServer(connOpt, asynq.Config{
		Concurrency:     cfg.Concurrency,
		Queues:          map[string]int{queueName: 1},
		ShutdownTimeout: time.Second,
		LogLevel:        asynq.FatalLevel,
		Logger:          noopLogger{},
	})

	start := time.Now()
	if err := srv.Start(handler); err != nil {
		return 0, fmt.Errorf("start asynq server: %w", err)
	}
	defer srv.Shutdown()

	select {
	case <-done:
	case <-ctx.Done():
		return 0, fmt.Errorf("process: %d of %d tasks handled: %w", handled.Load(), cfg.Tasks, ctx.Err())
	}
	// The handler has run for every task; the last few Done scripts (LREM from the active list)
	// may still be in flight. Wait for the active list to drain.
	for {
		n, err := rdb.LLen(ctx, activeKey).Result()
		if err != nil {
			return 0, fmt.Errorf("process: LLEN %s: %w", activeKey, err)
		}
		if n == 0 {
			break
		}
		time.Sleep(500 * time.Microsecond)
	}
	return time.Since(start), nil
}

// processCPU returns this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// snapshotRedis reads INFO server, cpu and commandstats.
func snapshotRedis(ctx context.Context, rdb *redis.Client) (redisSnapshot, error) {
	info, err := rdb.Info(ctx, "server", "cpu", "commandstats").Result()
	if err != nil {
		return redisSnapshot{}, fmt.Errorf("INFO: %w", err)
	}
	return parseInfo(info), nil
}

// parseInfo extracts a redisSnapshot from the text of INFO.
func parseInfo(info string) redisSnapshot {
	s := redisSnapshot{Calls: map[string]int64{}, Usec: map[string]int64{}}
	var user, sys, userMain, sysMain float64
	var haveUserMain, haveSysMain bool
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		switch key {
		case "redis_version":
			s.Version = val
		case "used_cpu_user":
			user, _ = strconv.ParseFloat(val, 64)
		case "used_cpu_sys":
			sys, _ = strconv.ParseFloat(val, 64)
		case "used_cpu_user_main_thread":
			userMain, _ = strconv.ParseFloat(val, 64)
			haveUserMain = true
		case "used_cpu_sys_main_thread":
			sysMain, _ = strconv.ParseFloat(val, 64)
			haveSysMain = true
		default:
			// cmdstat_<command>:calls=N,usec=...,...
			cmd, ok := strings.CutPrefix(key, "cmdstat_")
			if !ok {
				continue
			}
			for field := range strings.SplitSeq(val, ",") {
				if v, ok := strings.CutPrefix(field, "calls="); ok {
					s.Calls[cmd], _ = strconv.ParseInt(v, 10, 64)
				} else if v, ok := strings.CutPrefix(field, "usec="); ok {
					s.Usec[cmd], _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
	}
	s.CPU = user + sys
	s.MainThreadCPU = userMain + sysMain
	s.HasMainThread = haveUserMain && haveSysMain
	return s
}

// countKeys returns how many keys match keyPattern.
func countKeys(ctx context.Context, rdb *redis.Client) (int64, error) {
	var n int64
	iter := rdb.Scan(ctx, 0, keyPattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}

// deleteKeys deletes every key matching keyPattern and returns how many it deleted.
func deleteKeys(ctx context.Context, rdb *redis.Client) (int64, error) {
	var deleted int64
	batch := make([]string, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := rdb.Del(ctx, batch...).Result()
		deleted += n
		batch = batch[:0]
		return err
	}
	iter := rdb.Scan(ctx, 0, keyPattern, 1000).Iterator()
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return deleted, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return deleted, err
	}
	return deleted, flush()
}

// asynqVersion returns the version of github.com/hibiken/asynq built into this binary.
func asynqVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range bi.Deps {
		if m.Path == "github.com/hibiken/asynq" {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printTable writes the result as a metric/value table.
func printTable(out io.Writer, r result) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	c := r.Config
	fmt.Fprintln(w, "METRIC\tVALUE")
	fmt.Fprintf(w, "asynq\t%s (Redis %s, GOMAXPROCS %d)\n", r.AsynqVersion, r.RedisVersion, r.GoMaxProcs)
	pool := "default"
	if c.PoolSize > 0 {
		pool = strconv.Itoa(c.PoolSize)
	}
	fmt.Fprintf(w, "run\t%d noop tasks, payload %d B, concurrency %d, %d enqueuers, pool %s\n", c.Tasks, c.Payload, c.Concurrency, c.Enqueuers, pool)
	fmt.Fprintf(w, "enqueue\t%.0f ms, %.0f tasks/s\n", r.EnqueueMs, r.EnqueueTasksPerSec)
	fmt.Fprintf(w, "enqueue CPU µs/task\tclient %.1f, Redis %.1f\n", r.EnqueueCPUUsPerTask, r.EnqueueRedisCPUUsPerTask)
	fmt.Fprintf(w, "process\t%.0f ms\n", r.ProcessMs)
	fmt.Fprintf(w, "tasks/s (processing)\t%.0f\n", r.TasksPerSec)
	fmt.Fprintf(w, "tasks/s (enqueue + processing)\t%.0f\n", r.EndToEndTasksPerSec)
	fmt.Fprintf(w, "asynq CPU µs/task\t%.1f\n", r.AsynqCPUUsPerTask)
	fmt.Fprintf(w, "Redis CPU µs/task\t%.1f\n", r.RedisCPUUsPerTask)
	if r.RedisMainThreadCPUUsPerTask > 0 {
		fmt.Fprintf(w, "Redis main-thread CPU µs/task\t%.1f\n", r.RedisMainThreadCPUUsPerTask)
	}
	fmt.Fprintf(w, "Redis commands/task\t%.2f (script calls %.2f)\n", r.RedisCommandsPerTask, r.RedisScriptCallsPerTask)
	for _, cc := range r.TopCommands {
		fmt.Fprintf(w, "  %s\t%d (%.2f/task, %.1f µs/call)\n", cc.Command, cc.Calls, cc.PerTask, cc.UsecPerCall)
	}
	fmt.Fprintf(w, "keys deleted\t%d\n", r.KeysDeleted)
	w.Flush()
}
