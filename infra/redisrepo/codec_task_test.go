package redisrepo

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

var codecStages = []stage.Spec{{Name: "build", Kind: "noop"}, {Name: "deploy", Kind: "noop"}, {Name: "verify", Kind: "noop"}}

// codecTime is a time as the ledger keeps it: UTC, whole microseconds.
func codecTime(sec int) time.Time {
	return time.Date(2026, 11, 21, 10, 0, sec, 123456000, time.UTC)
}

// loadTask builds a task from s, filling in what every task has.
func loadTask(t *testing.T, s task.State) *task.Task {
	t.Helper()
	s.ID, s.PlanID, s.TenantID, s.Stages = ulid.Make().String(), ulid.Make().String(), "tenant-a", codecStages
	if s.Status == "" {
		s.Status = task.Running
	}
	if s.Attempt == 0 {
		s.Attempt = 1
	}
	s.CreatedAt, s.UpdatedAt = codecTime(0), codecTime(30)
	tk, err := task.Load(s)
	require.NoError(t, err)
	return tk
}

// storedHash is tk's hash as Redis holds it after a write: taskFields, the fence, and the
// bump token (a field decodeTask does not read).
func storedHash(t *testing.T, tk *task.Task) map[string]string {
	t.Helper()
	fields, err := taskFields(tk)
	require.NoError(t, err)
	fields = append(fields, "fence", tk.Fence(), "bump", ulid.Make().String())
	require.Zero(t, len(fields)%2)
	h := make(map[string]string, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		name := fields[i].(string)
		require.NotContains(t, h, name, "field %s twice", name)
		h[name] = fmt.Sprint(fields[i+1])
	}
	return h
}

func succeeded(i, run int, at time.Time) task.Attempt {
	return task.Attempt{
		StageIndex: i, Stage: codecStages[i].Name, Run: run, Attempt: 1,
		StartedAt: at, EndedAt: at.Add(1500 * time.Microsecond), Outcome: task.OutcomeSucceeded,
	}
}

func TestTaskCodecRoundTrip(t *testing.T) {
	t.Parallel()
	failed := task.Attempt{
		StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 1, StartedAt: codecTime(2), EndedAt: codecTime(4),
		Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Code: 503, Backoff: 2500 * time.Millisecond,
		Error: "upstream said: a|b||c\nsecond line\r\nthird |",
	}
	tests := []struct {
		name  string
		state task.State
	}{
		{name: "new task, no params, no ledger", state: task.State{Status: task.Pending}},
		{name: "empty params", state: task.State{Status: task.Pending, Params: map[string]any{}}},
		{
			name: "running with attempts, params and a pause request",
			state: task.State{
				Params:         map[string]any{"region": "eu-1", "replicas": float64(3), "tags": []any{"a|b", "c"}},
				PauseRequested: true, CurrentStage: 2, StartedAt: codecTime(1), HeartbeatAt: codecTime(9), Fence: 7,
				Ledger: []task.Attempt{
					succeeded(0, 1, codecTime(1)), failed,
					{StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 2, StartedAt: codecTime(6), EndedAt: codecTime(6),
						Outcome: task.OutcomeSucceeded},
				},
			},
		},
		{
			name: "failed, then retried: last error and attempts of two runs",
			state: task.State{
				Status: task.Failed, Attempt: 2, CurrentStage: 1, StartedAt: codecTime(10), FinishedAt: codecTime(20),
				LastError: &task.Failure{Stage: "deploy", Attempt: 3, Class: stage.ClassPermanent, Message: "bad | gateway\n", Code: 502},
				Fence:     3,
				Ledger: []task.Attempt{
					succeeded(0, 1, codecTime(1)),
					{StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 1, StartedAt: codecTime(2), EndedAt: codecTime(3),
						Outcome: task.OutcomeFailed, Class: stage.ClassPermanent, Error: "boom"},
					succeeded(0, 2, codecTime(11)),
					{StageIndex: 1, Stage: "deploy", Run: 2, Attempt: 1, StartedAt: codecTime(12), EndedAt: codecTime(19),
						Outcome: task.OutcomeFailed, Class: stage.ClassPermanent, Code: 502, Error: "bad | gateway\n"},
				},
			},
		},
		{
			name: "completed",
			state: task.State{
				Status: task.Completed, CurrentStage: 3, StartedAt: codecTime(1), FinishedAt: codecTime(5), Fence: 1,
				Ledger: []task.Attempt{succeeded(0, 1, codecTime(1)), succeeded(1, 1, codecTime(2)), succeeded(2, 1, codecTime(3))},
			},
		},
		{
			name: "beat when last updated (a stage transition)",
			state: task.State{
				CurrentStage: 1, StartedAt: codecTime(1), HeartbeatAt: codecTime(30), Fence: 2,
				Ledger: []task.Attempt{succeeded(0, 1, codecTime(1))},
			},
		},
		{
			name: "interrupted: the attempt cut short is in the ledger",
			state: task.State{
				Status: task.Interrupted, CurrentStage: 1, StartedAt: codecTime(1), Fence: 2,
				LastError: &task.Failure{Stage: "deploy", Class: stage.ClassLeaseLost, Message: "owner lost"},
				Ledger: []task.Attempt{
					succeeded(0, 1, codecTime(1)),
					{StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 1, StartedAt: codecTime(2), EndedAt: codecTime(5),
						Outcome: task.OutcomeInterrupted, Class: stage.ClassLeaseLost, Error: "owner lost (its end was not seen)"},
				},
			},
		},
		{
			name: "an attempt that failed only with a backoff, one before the epoch",
			state: task.State{Ledger: []task.Attempt{
				{StageIndex: 2, Stage: "verify", Run: 1, Attempt: 1, StartedAt: time.UnixMicro(-5).UTC(), EndedAt: codecTime(1),
					Outcome: task.OutcomeFailed, Backoff: time.Millisecond},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := loadTask(t, tt.state)
			h := storedHash(t, want)
			require.NotContains(t, h["params"], "null")
			h["l"+h["ledger"]] = "unread: past the ledger's count" // and h holds "bump", which is not a task field
			got, err := decodeTask(h, codecStages)
			require.NoError(t, err)
			require.Equal(t, want.State(), got.State())
		})
	}
}

// A task that beat when it was last updated (each stage transition does) stores its heartbeat
// as "=": the field is the same from one transition to the next, so a transition does not
// send it; any other heartbeat is stored as its time.
func TestHeartbeatAtUpdateIsStoredAsSame(t *testing.T) {
	t.Parallel()
	beat := loadTask(t, task.State{StartedAt: codecTime(1), HeartbeatAt: codecTime(30)})
	require.Equal(t, sameAsUpdated, storedHash(t, beat)["heartbeatAt"])
	earlier := loadTask(t, task.State{StartedAt: codecTime(1), HeartbeatAt: codecTime(29)})
	require.Equal(t, encTime(codecTime(29)), storedHash(t, earlier)["heartbeatAt"])
	never := loadTask(t, task.State{Status: task.Pending})
	require.Empty(t, storedHash(t, never)["heartbeatAt"], "a task that never ran has no heartbeat")
}

// Every field of a task that ran its stages without a failure fits Redis's listpack value
// limit (hash-max-listpack-value 64), so its hash stays compact.
func TestSucceededTaskFieldsFitListpack(t *testing.T) {
	t.Parallel()
	tk := loadTask(t, task.State{
		Status: task.Completed, CurrentStage: 3, StartedAt: codecTime(1), FinishedAt: codecTime(5),
		Ledger: []task.Attempt{succeeded(0, 1, codecTime(1)), succeeded(1, 1, codecTime(2)), succeeded(2, 1, codecTime(3))},
	})
	h := storedHash(t, tk)
	require.Equal(t, "3", h["ledger"])
	require.Equal(t, "", h["params"], "no params")
	for name, v := range h {
		require.LessOrEqual(t, len(v), 64, "field %s = %q", name, v)
	}
	// The start is µs after the task's createdAt; the outcome one letter.
	require.Equal(t, fmt.Sprintf("1|1|1|%d|1500|s", codecTime(2).UnixMicro()-tk.CreatedAt().UnixMicro()), h["l1"])
}

func TestInterruptedAttemptIsStoredWithItsOneLetterOutcome(t *testing.T) {
	t.Parallel()
	tk := loadTask(t, task.State{Status: task.Interrupted, StartedAt: codecTime(1), Ledger: []task.Attempt{
		{StageIndex: 0, Stage: "build", Run: 1, Attempt: 2, StartedAt: codecTime(2), EndedAt: codecTime(3),
			Outcome: task.OutcomeInterrupted, Class: stage.ClassShutdown, Error: "executor shutting down"},
	}})
	start := codecTime(2).UnixMicro() - tk.CreatedAt().UnixMicro()
	require.Equal(t, fmt.Sprintf("0|1|2|%d|1000000|i|shutdown|||executor shutting down", start), storedHash(t, tk)["l0"])
}

func TestTaskCodecReadsLegacyForms(t *testing.T) {
	t.Parallel()
	want := loadTask(t, task.State{
		Ledger: []task.Attempt{{StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 2, StartedAt: codecTime(1), EndedAt: codecTime(2),
			Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Code: 503, Backoff: 2 * time.Second, Error: "503"}},
	})
	h := storedHash(t, want)
	h["params"] = "null"
	h["ledger"] = fmt.Sprintf(`[{"i":1,"s":"deploy","r":1,"a":2,"t0":%d,"t1":%d,"o":"failed","c":"retryable","e":"503","h":503,"b":2000}]`,
		codecTime(1).UnixMicro(), codecTime(2).UnixMicro())
	delete(h, "l0")
	got, err := decodeTask(h, codecStages)
	require.NoError(t, err)
	require.Equal(t, want.State(), got.State())
}

func TestTaskCodecRefusesBadLedgers(t *testing.T) {
	t.Parallel()
	at := codecTime(1).UnixMicro()
	tests := []struct {
		name    string
		change  map[string]string // fields set; "" deletes the field
		wantErr string
	}{
		{name: "missing attempt", change: map[string]string{"l1": ""}, wantErr: "l1 missing"},
		{name: "count beyond the attempts", change: map[string]string{"ledger": "3"}, wantErr: "l2 missing"},
		{name: "count not a number", change: map[string]string{"ledger": "two"}, wantErr: "ledger"},
		{name: "negative count", change: map[string]string{"ledger": "-1"}, wantErr: "-1 attempts"},
		{name: "no count", change: map[string]string{"ledger": ""}, wantErr: "ledger"},
		{name: "stage index past the stages", change: map[string]string{"l1": fmt.Sprintf("3|1|1|%d|5|succeeded", at)}, wantErr: "out of range"},
		{name: "negative stage index", change: map[string]string{"l1": fmt.Sprintf("-1|1|1|%d|5|succeeded", at)}, wantErr: "out of range"},
		{name: "too few parts", change: map[string]string{"l0": fmt.Sprintf("0|1|1|%d|5", at)}, wantErr: "5 parts"},
		{name: "parts between short and full", change: map[string]string{"l0": fmt.Sprintf("0|1|1|%d|5|failed|permanent", at)}, wantErr: "7 parts"},
		{name: "empty record", change: map[string]string{"l0": "-"}, wantErr: "1 parts"},
		{name: "start not a number", change: map[string]string{"l0": "0|1|1|yesterday|5|succeeded"}, wantErr: "start"},
		{name: "code not a number", change: map[string]string{"l0": fmt.Sprintf("0|1|1|%d|5|failed|remote|5xx||boom", at)}, wantErr: "code"},
		{name: "backoff not a number", change: map[string]string{"l0": fmt.Sprintf("0|1|1|%d|5|failed|retryable||2s|boom", at)}, wantErr: "backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := storedHash(t, loadTask(t, task.State{Ledger: []task.Attempt{succeeded(0, 1, codecTime(1)), succeeded(1, 1, codecTime(2))}}))
			for name, v := range tt.change {
				if v == "" {
					delete(h, name)
				} else {
					h[name] = v
				}
			}
			_, err := decodeTask(h, codecStages)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
			require.True(t, strings.HasPrefix(err.Error(), "ledger"), err.Error())
		})
	}
}
