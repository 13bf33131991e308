//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// TaskView is one task at the end: its status in its Redis hash and through every
// executor's API (its plan's task list, and GET /v1/tasks/{id}).
type TaskView struct {
	TaskID       string
	TenantID     string
	PlanID       string
	Redis        string            // the hash's status; "" when the hash is gone
	RedisAttempt int               // the hash's attempt
	List         map[string]string // executor → status in GET /v1/plans/{id}/tasks
	Get          map[string]string // executor → status of GET /v1/tasks/{id} ("HTTP 404", …)
	Attempt      int               // the attempt the API reports
	Executor     string            // the executor that ran it last
	LastError    string
	// The tenant's keys in Redis (docs/redis.md): its latest task (index), the task holding
	// it (active marker) and its lease; "" when absent.
	Index, Active, Lease string
	// RedisRaw is the task's Redis hash (as for PlanView) when some view differs from it.
	RedisRaw string
}

// Status is the task's status as the API reports it (the first executor's that answered),
// else Redis's.
func (v *TaskView) Status() string {
	if keys := sortedKeys(v.List); len(keys) > 0 {
		return v.List[keys[0]]
	}
	return v.Redis
}

// Ended reports whether the task ended in Redis and through every executor's API.
func (v *TaskView) Ended() bool {
	return terminal(v.Redis) && allTerminal(v.List) && allTerminal(v.Get)
}

// Gone reports a task neither Redis nor any executor knows (any more).
func (v *TaskView) Gone() bool { return v.Redis == "" && !anyFound(v.List) && !anyFound(v.Get) }

// allTerminal reports whether every status in m is an end; an API error ("HTTP 404 …", no
// answer) is not a status: the views check counts it.
func allTerminal(m map[string]string) bool {
	for _, s := range m {
		if isStatus(s) && !terminal(s) {
			return false
		}
	}
	return true
}

// isStatus tells a status from an API error.
func isStatus(s string) bool {
	return !strings.HasPrefix(s, "HTTP ") && !strings.HasPrefix(s, "no answer")
}

// PlanView is one plan at the end.
type PlanView struct {
	PlanID  string
	Redis   string            // the hash's status; "" when gone
	API     map[string]string // executor → status of GET /v1/plans/{id} ("HTTP 404", …)
	Reason  string
	TaskIDs []string
	// RedisRaw is the plan's Redis hash (its fields, with the status and version) when some
	// executor's view differs from it: evidence.
	RedisRaw string
	// Dispatch is the plan's shared queue as Redis holds it (queued ids, claims, the dispatch
	// hash) when the plan has not ended: evidence of a task that nobody claims any more.
	Dispatch string
}

// Status is the plan's status as the API reports it, else Redis's.
func (v *PlanView) Status() string {
	for _, name := range sortedKeys(v.API) {
		if s := v.API[name]; terminal(s) || s == statusRunning || s == statusPaused || s == statusPending {
			return s
		}
	}
	return v.Redis
}

// Ended reports whether the plan ended in Redis and through every executor's API.
func (v *PlanView) Ended() bool { return terminal(v.Redis) && allTerminal(v.API) }

// Gone reports a plan neither Redis nor any executor knows (any more).
func (v *PlanView) Gone() bool { return v.Redis == "" && !anyFound(v.API) }

// differs reports whether some executor's view of the plan is not Redis's.
func (v *PlanView) differs() bool {
	for _, s := range v.API {
		if s != v.Redis {
			return true
		}
	}
	return false
}

// Snapshot is the final state of every plan and task.
type Snapshot struct {
	Taken time.Time
	Plans map[string]*PlanView
	Tasks map[string]*TaskView
}

// TakeSnapshot reads plans planIDs and their tasks through every executor that is up and
// from Redis. A plan's tasks are those its API lists, its Redis hash names (taskIds) and
// known (plan id → task ids: what the workload saw), so that a task no executor lists any
// more is read too.
func TakeSnapshot(ctx context.Context, c *Cluster, api *API, planIDs []string, known map[string][]string) (*Snapshot, error) {
	s := &Snapshot{Taken: time.Now(), Plans: map[string]*PlanView{}, Tasks: map[string]*TaskView{}}
	task := func(id string) *TaskView {
		v, ok := s.Tasks[id]
		if !ok {
			v = &TaskView{TaskID: id, List: map[string]string{}, Get: map[string]string{}}
			s.Tasks[id] = v
		}
		return v
	}
	for _, id := range planIDs {
		pv := &PlanView{PlanID: id, API: map[string]string{}}
		s.Plans[id] = pv
		for _, e := range c.Executors {
			if !e.Up() {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			pa := api.Do(rctx, e, http.MethodGet, "/v1/plans/"+id+"?include=taskIds", nil, nil)
			ta := api.Do(rctx, e, http.MethodGet, "/v1/plans/"+id+"/tasks", nil, nil)
			cancel()
			var p wirePlan
			if !pa.OK() || pa.Decode(&p) != nil {
				pv.API[e.Name] = httpStatus(pa)
			} else {
				pv.API[e.Name] = p.Status
				pv.Reason = p.Reason
				if len(p.TaskIDs) > len(pv.TaskIDs) {
					pv.TaskIDs = p.TaskIDs
				}
			}
			var tl wireTaskList
			if ta.OK() && ta.Decode(&tl) == nil {
				for _, tk := range tl.Tasks {
					v := task(tk.TaskID)
					v.TenantID, v.PlanID, v.Attempt, v.Executor = tk.TenantID, tk.PlanID, tk.Attempt, tk.Executor
					v.List[e.Name] = tk.Status
					if tk.LastError != nil {
						v.LastError = fmt.Sprintf("%s at %s: %s", tk.LastError.Class, tk.LastError.Stage, tk.LastError.Message)
					}
				}
			}
		}
		ids := append(append([]string(nil), pv.TaskIDs...), known[id]...)
		if raw, err := c.RDB.HGet(ctx, "executor:plan:{"+id+"}", "taskIds").Result(); err == nil {
			var fromRedis []string
			if json.Unmarshal([]byte(raw), &fromRedis) == nil {
				ids = append(ids, fromRedis...)
			}
		}
		for _, tid := range ids {
			task(tid).PlanID = id
		}
	}
	for _, v := range s.Tasks {
		for _, e := range c.Executors {
			if !e.Up() {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			a := api.Do(rctx, e, http.MethodGet, "/v1/tasks/"+v.TaskID, nil, nil)
			cancel()
			var tk wireTask
			if !a.OK() || a.Decode(&tk) != nil {
				v.Get[e.Name] = httpStatus(a)
				continue
			}
			v.Get[e.Name] = tk.Status
			if v.TenantID == "" {
				v.TenantID, v.Attempt = tk.TenantID, tk.Attempt
			}
		}
	}
	if err := s.readRedis(ctx, c.RDB); err != nil {
		return s, err
	}
	return s, nil
}

func (s *Snapshot) readRedis(ctx context.Context, rdb *redis.Client) error {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pipe := rdb.Pipeline()
	plans := map[string]*redis.StringCmd{}
	for id := range s.Plans {
		plans[id] = pipe.HGet(rctx, "executor:plan:{"+id+"}", "status")
	}
	tasks := map[string]*redis.SliceCmd{}
	for id := range s.Tasks {
		tasks[id] = pipe.HMGet(rctx, "executor:task:{"+id+"}", "status", "attempt", "tenantId")
	}
	if _, err := pipe.Exec(rctx); err != nil && err != redis.Nil {
		return fmt.Errorf("chaos: reading Redis: %w", err)
	}
	for id, cmd := range plans {
		s.Plans[id].Redis, _ = cmd.Result()
	}
	for id, cmd := range tasks {
		v := s.Tasks[id]
		vals, _ := cmd.Result()
		if len(vals) != 3 {
			continue
		}
		if st, ok := vals[0].(string); ok {
			v.Redis = st
		}
		if a, ok := vals[1].(string); ok {
			v.RedisAttempt, _ = strconv.Atoi(a)
		}
		if t, ok := vals[2].(string); ok && v.TenantID == "" {
			v.TenantID = t
		}
	}
	// The tenants' keys, once every task's tenant is known.
	pipe = rdb.Pipeline()
	tenantKeys := map[string][3]*redis.StringCmd{}
	for _, v := range s.Tasks {
		if _, ok := tenantKeys[v.TenantID]; !ok && v.TenantID != "" {
			tenantKeys[v.TenantID] = [3]*redis.StringCmd{
				pipe.Get(rctx, "executor:index:tenant:{"+v.TenantID+"}"),
				pipe.Get(rctx, "executor:active:tenant:{"+v.TenantID+"}"),
				pipe.Get(rctx, "executor:lock:tenant:{"+v.TenantID+"}"),
			}
		}
	}
	if _, err := pipe.Exec(rctx); err != nil && err != redis.Nil {
		return fmt.Errorf("chaos: reading Redis: %w", err)
	}
	for _, v := range s.Tasks {
		if keys, ok := tenantKeys[v.TenantID]; ok {
			v.Index, _ = keys[0].Result()
			v.Active, _ = keys[1].Result()
			v.Lease, _ = keys[2].Result()
		}
	}
	return s.readRaw(rctx, rdb)
}

// readRaw reads the whole Redis hash of every plan and task some executor sees otherwise.
func (s *Snapshot) readRaw(ctx context.Context, rdb *redis.Client) error {
	for id, pv := range s.Plans {
		if pv.differs() && !pv.Gone() {
			pv.RedisRaw = rawHash(ctx, rdb, "executor:plan:{"+id+"}")
		}
		if !pv.Ended() && !pv.Gone() {
			pv.Dispatch = rawDispatch(ctx, rdb, id)
		}
	}
	for id, v := range s.Tasks {
		differs := false
		for _, m := range []map[string]string{v.List, v.Get} {
			for _, st := range m {
				differs = differs || st != v.Redis
			}
		}
		if differs {
			v.RedisRaw = rawHash(ctx, rdb, "executor:task:{"+id+"}")
		}
	}
	return nil
}

// rawDispatch describes a plan's shared queue (docs/redis.md): its queued task ids with
// their scores, its claims (task id → executor|claim ms) and its dispatch hash.
func rawDispatch(ctx context.Context, rdb *redis.Client, planID string) string {
	queued, err1 := rdb.ZRangeWithScores(ctx, "executor:queue:{"+planID+"}", 0, -1).Result()
	inflight, err2 := rdb.HGetAll(ctx, "executor:inflight:{"+planID+"}").Result()
	dispatch, err3 := rdb.HGetAll(ctx, "executor:dispatch:{"+planID+"}").Result()
	if err := errors.Join(err1, err2, err3); err != nil {
		return "dispatch: " + err.Error()
	}
	q := make([]string, len(queued))
	for i, z := range queued {
		q[i] = fmt.Sprintf("%v@%g", z.Member, z.Score)
	}
	return fmt.Sprintf("dispatch: queued %v, in flight %v, dispatch %v", q, inflight, dispatch)
}

// rawHash describes a hash: its field names, and its status, version and fence.
func rawHash(ctx context.Context, rdb *redis.Client, key string) string {
	m, err := rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return err.Error()
	}
	ttl, _ := rdb.TTL(ctx, key).Result()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("%s: %d fields %v, status %q version %q fence %q, ttl %s", key, len(m), names, m["status"], m["version"], m["fence"], ttl)
}

func httpStatus(a Answer) string {
	if a.Err != nil {
		return "no answer: " + a.Err.Error()
	}
	var p wireProblem
	if json.Unmarshal(a.Body, &p) == nil && p.Detail != "" {
		return fmt.Sprintf("HTTP %d (%s)", a.Code, p.Detail)
	}
	return fmt.Sprintf("HTTP %d", a.Code)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
