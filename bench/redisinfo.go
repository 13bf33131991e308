package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/roundtrips"
)

// readInfo sends INFO section to every master (the one node, Sentinel's master, each master
// of a Cluster) and calls fn with each field of each answer, name and value; callers sum the
// fields over the masters. The bench's own INFO calls are not counted as round trips.
func readInfo(ctx context.Context, c redis.UniversalClient, section string, fn func(name, value string)) error {
	return forEachMaster(roundtrips.Uncounted(ctx), c, func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, section).Result()
		if err != nil {
			return fmt.Errorf("bench: INFO %s: %w", section, err)
		}
		for line := range strings.Lines(info) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			if name, v, ok := strings.Cut(line, ":"); ok {
				fn(name, v)
			}
		}
		return nil
	})
}

// usedMemory returns INFO memory used_memory less the memory of client connections
// (mem_clients_normal: query and reply buffers, which follow the number of connections and
// batches in flight, not the data). It first waits (up to lazyFreeWait) until Redis has no
// objects left to free in the background (lazyfree_pending_objects: another client's UNLINK
// or FLUSHALL ASYNC), whose memory would otherwise count before and be gone after.
func usedMemory(ctx context.Context, c redis.UniversalClient) (int64, error) {
	deadline := time.Now().Add(lazyFreeWait)
	for {
		fields := map[string]int64{}
		err := readInfo(ctx, c, "memory", func(name, v string) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				fields[name] += n
			}
		})
		if err != nil {
			return 0, err
		}
		used, ok := fields["used_memory"]
		if !ok {
			return 0, errors.New("bench: INFO memory has no used_memory")
		}
		if fields["lazyfree_pending_objects"] == 0 || time.Now().After(deadline) {
			return used - fields["mem_clients_normal"], nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lazyFreeWait bounds how long usedMemory waits for Redis's background frees.
const lazyFreeWait = 10 * time.Second

// redisStats is Redis's CPU time and command counts at one instant, summed over the masters.
type redisStats struct {
	cpuSeconds float64                 // INFO cpu used_cpu_sys + used_cpu_user
	commands   map[string]commandCount // INFO commandstats, by command
}

// commandCount is one command's line of INFO commandstats.
type commandCount struct{ calls, usec int64 }

// scriptCommands are the commands that run a script or a function.
var scriptCommands = []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"}

// readRedisStats reads INFO cpu and INFO commandstats.
func readRedisStats(ctx context.Context, c redis.UniversalClient) (redisStats, error) {
	s := redisStats{commands: map[string]commandCount{}}
	err := readInfo(ctx, c, "cpu", func(name, v string) {
		if name != "used_cpu_sys" && name != "used_cpu_user" {
			return
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			s.cpuSeconds += f
		}
	})
	if err != nil {
		return redisStats{}, err
	}
	// cmdstat_evalsha:calls=10,usec=120,usec_per_call=12.00,rejected_calls=0,failed_calls=0
	err = readInfo(ctx, c, "commandstats", func(name, v string) {
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok {
			return
		}
		cc := s.commands[cmd]
		for kv := range strings.SplitSeq(v, ",") {
			k, n, _ := strings.Cut(kv, "=")
			i, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				cc.calls += i
			case "usec":
				cc.usec += i
			}
		}
		s.commands[cmd] = cc
	})
	if err != nil {
		return redisStats{}, err
	}
	return s, nil
}

// since sets res's Redis CPU and commands per transition from s less before.
func (s redisStats) since(before redisStats, res *Result) {
	n := float64(res.Transitions)
	res.RedisCPUUsPerTransition = (s.cpuSeconds - before.cpuSeconds) * 1e6 / n
	var calls, scripts int64
	res.RedisCommands = nil
	for name, c := range s.commands {
		d := c.calls - before.commands[name].calls
		if d <= 0 {
			continue
		}
		calls += d
		if slices.Contains(scriptCommands, name) {
			scripts += d
		}
		res.RedisCommands = append(res.RedisCommands, CommandStat{
			Name:               name,
			CallsPerTransition: float64(d) / n,
			UsecPerCall:        float64(c.usec-before.commands[name].usec) / float64(d),
		})
	}
	slices.SortFunc(res.RedisCommands, func(a, b CommandStat) int {
		return cmp.Or(cmp.Compare(b.CallsPerTransition, a.CallsPerTransition), strings.Compare(a.Name, b.Name))
	})
	res.RedisCommandsPerTransition = float64(calls) / n
	res.RedisScriptCallsPerTransition = float64(scripts) / n
}
