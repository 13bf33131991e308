package redisrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/repotest"
)

// benchStageCount is the number of stages of the benchmarks' tasks (the executor bench's
// default plan: 10 noop stages).
const benchStageCount = 10

// benchSpecs is a plan's template of benchStageCount noop stages.
var benchSpecs = repotest.NoopStages(benchStageCount)

// benchEpoch is the fence epoch the benchmarks' runs hold.
const benchEpoch = 3

// benchStart is when the benchmarks' tasks start: whole microseconds, as the ledger keeps them.
var benchStart = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

// startedTask is a RUNNING task of a tenant with params, at stage 0.
func startedTask(tb testing.TB) *task.Task {
	tb.Helper()
	tk, err := task.New(ulid.Make().String(), "tenant-00042",
		map[string]any{"region": "eu-west-1", "replicas": float64(3), "image": "registry.local/app:1.42.0"},
		benchSpecs, benchStart)
	require.NoError(tb, err)
	require.NoError(tb, tk.Start(benchEpoch, benchStart))
	return tk
}

// completeStage completes tk's stage i as the orchestrator does at a stage transition.
func completeStage(tb testing.TB, tk *task.Task, i int) {
	tb.Helper()
	require.NoError(tb, repotest.CompleteStage(tk, nil, i, benchStart.Add(time.Duration(i+1)*time.Millisecond)))
}

// ranTask is a task that ran all benchStageCount stages and completed.
func ranTask(tb testing.TB) *task.Task {
	tb.Helper()
	tk := startedTask(tb)
	for i := range benchStageCount {
		completeStage(tb, tk, i)
	}
	require.NoError(tb, tk.Complete(benchStart.Add(time.Second)))
	return tk
}

// fieldsHash is fields (name, value pairs) as the hash Redis holds, plus the fence.
func fieldsHash(tb testing.TB, fields []any, fence uint64) map[string]string {
	tb.Helper()
	require.Zero(tb, len(fields)%2, "field, value pairs")
	h := make(map[string]string, len(fields)/2+1)
	for i := 0; i < len(fields); i += 2 {
		name, ok := fields[i].(string)
		require.True(tb, ok, "field name %v", fields[i])
		require.NotContains(tb, h, name, "field %s twice", name)
		h[name] = fieldString(fields[i+1])
	}
	h["fence"] = fieldString(fence)
	return h
}

// encodedBytes is the size of fields' names and values as sent to Redis.
func encodedBytes(fields []any) int {
	n := 0
	for _, f := range fields {
		n += len(fieldString(f))
	}
	return n
}

// fieldNames lists the names of fields (name, value pairs).
func fieldNames(fields []any) []string {
	names := make([]string, 0, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		names = append(names, fields[i].(string))
	}
	return names
}

// BenchmarkTaskFields measures encoding a whole task hash (taskFields: what a write-back or a
// run without a seeded fence sends) of a completed task with tenant params that ran 10 stages.
func BenchmarkTaskFields(b *testing.B) {
	tk := ranTask(b)
	b.ReportAllocs()
	var fields []any
	for b.Loop() {
		var err error
		fields, err = taskFields(tk)
		require.NoError(b, err)
	}
	b.StopTimer()
	// What was encoded is the whole task: it decodes back to tk.
	got, err := decodeTask(fieldsHash(b, fields, tk.Fence()), benchSpecs)
	require.NoError(b, err)
	require.Equal(b, tk.State(), got.State())
	b.ReportMetric(float64(len(fields)/2), "fields")
	b.ReportMetric(float64(encodedBytes(fields)), "encoded-B")
}

// BenchmarkRunFields measures the incremental encoding of one stage transition: runFields of a
// RUNNING task that just completed its 10th stage, with the 9 earlier ledger attempts known
// to be written (what saveOnline encodes before diffing against the written fields).
func BenchmarkRunFields(b *testing.B) {
	tk := startedTask(b)
	for i := range benchStageCount {
		completeStage(b, tk, i)
	}
	b.ReportAllocs()
	var rf runValues
	for b.Loop() {
		var err error
		rf, err = runFields(tk, benchStageCount-1)
		require.NoError(b, err)
	}
	b.StopTimer()
	fields := rf.pairs(nil)
	names := fieldNames(fields)
	require.Contains(b, names, "l9", "the new attempt is encoded")
	for _, name := range names {
		require.False(b, strings.HasPrefix(name, "l") && name != "l9" && name != "lastError" && name != "ledger",
			"attempt %s, written before, is encoded again", name)
	}
	require.NotContains(b, names, "params", "params never change after creation")
	b.ReportMetric(float64(len(fields)/2), "fields")
	b.ReportMetric(float64(encodedBytes(fields)), "encoded-B")
}

// BenchmarkDecodeTask measures decoding a completed 10-stage task from its hash as HGETALL
// returns it (decodeTask: every read of a task from Redis, and every fence bump).
func BenchmarkDecodeTask(b *testing.B) {
	tk := ranTask(b)
	fields, err := taskFields(tk)
	require.NoError(b, err)
	h := fieldsHash(b, fields, tk.Fence())
	b.ReportAllocs()
	var got *task.Task
	for b.Loop() {
		got, err = decodeTask(h, benchSpecs)
		require.NoError(b, err)
	}
	b.StopTimer()
	require.Equal(b, tk.State(), got.State())
	b.ReportMetric(float64(len(h)), "fields")
}

// BenchmarkEncCheckpoint measures encoding the checkpoint of a task that completed 10 stages
// (encCheckpoint: sent with every stage transition), with the null outputs of noop stages
// and with a small JSON output per stage.
func BenchmarkEncCheckpoint(b *testing.B) {
	for _, bc := range []struct {
		name   string
		output func(i int) json.RawMessage
	}{
		{"null-outputs", func(int) json.RawMessage { return nil }},
		{"json-outputs", func(i int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"status":200,"version":"1.42.%d","url":"https://svc.local/deploy/%d"}`, i, i))
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cp := checkpoint.New(ulid.Make().String())
			for i, sp := range benchSpecs {
				require.NoError(b, cp.Record(i, sp.Name, bc.output(i), benchEpoch, benchStart.Add(time.Duration(i)*time.Millisecond)))
			}
			b.ReportAllocs()
			var enc []byte
			for b.Loop() {
				var err error
				enc, err = encCheckpoint(cp)
				require.NoError(b, err)
			}
			b.StopTimer()
			got, err := decCheckpoint(cp.TaskID(), enc)
			require.NoError(b, err)
			require.Equal(b, cp.State(), got.State())
			b.ReportMetric(float64(len(enc)), "encoded-B")
		})
	}
}

// BenchmarkWrittenFieldsDiff measures writtenFields.diff at a stage transition: the task's
// hash as written after 9 stages is seeded (as a fence bump and the run's writes leave it),
// and the fields of its 10th stage transition are diffed against it, among 1,000 other runs'
// tasks (the per-executor memory of 64 workers' runs is far smaller; the map's size hardly
// matters).
func BenchmarkWrittenFieldsDiff(b *testing.B) {
	tk := startedTask(b)
	for i := range benchStageCount - 1 {
		completeStage(b, tk, i)
	}
	before, err := taskFields(tk)
	require.NoError(b, err)
	var w writtenFields
	for range 1000 {
		w.seed(ulid.Make().String(), benchEpoch, 0, fieldsHash(b, before, benchEpoch))
	}
	w.seed(tk.ID(), tk.Fence(), tk.Version(), fieldsHash(b, before, tk.Fence()))
	completeStage(b, tk, benchStageCount-1)
	rf, err := runFields(tk, benchStageCount-1)
	require.NoError(b, err)
	fields := rf.pairs(nil)

	b.ReportAllocs()
	changed := make([]any, 0, len(fields))
	for b.Loop() {
		changed, _ = w.diff(tk.ID(), tk.Fence(), tk.Version(), &rf, changed[:0])
	}
	b.StopTimer()
	// A stage transition changes the stage, the update time and the ledger (its count and
	// one attempt); the rest is as written (heartbeatAt stays "=", the update time).
	require.ElementsMatch(b, []string{"stage", "updatedAt", "ledger", "l9"}, fieldNames(changed))
	b.ReportMetric(float64(len(fields)/2), "fields-in")
	b.ReportMetric(float64(len(changed)/2), "fields-out")
}

// fieldString is a field value as Redis stores it.
func fieldString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	default:
		return fmt.Sprint(v)
	}
}
