package redisrepo

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writtenTestValues are a run's fields: RUNNING at stage 3, updated at "t2".
func writtenTestValues() runValues {
	var v runValues
	v.vals[fStatus], v.vals[fStage], v.vals[fUpdatedAt] = "RUNNING", "3", "t2"
	return v
}

// hashOf is v's fields as the hash Redis holds, with the given fields changed (a value "-"
// leaves the field out).
func hashOf(v runValues, changes ...string) map[string]string {
	h := map[string]string{"fence": "2"}
	for i, name := range runFieldNames {
		h[name] = v.vals[i]
	}
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "-" {
			delete(h, changes[i])
		} else {
			h[changes[i]] = changes[i+1]
		}
	}
	return h
}

// pairsOf is the field, value pairs of v named by names, in the order a write sends them.
func pairsOf(v runValues, names ...string) []any {
	out := []any{}
	for i, name := range runFieldNames {
		if slices.Contains(names, name) {
			out = append(out, name, v.vals[i])
		}
	}
	return out
}

func TestWrittenFieldsSendOnlyChanges(t *testing.T) {
	t.Parallel()
	v := writtenTestValues()
	all := v.pairs(nil)
	tests := []struct {
		name    string
		setup   func(w *writtenFields)
		fence   uint64
		version uint64
		want    []any
	}{
		{"nothing known: every field", func(*writtenFields) {}, 2, 5, all},
		{"seeded at the epoch: the changed ones", func(w *writtenFields) {
			w.seed("t", 2, 5, hashOf(v, "stage", "2", "updatedAt", "t1"))
		}, 2, 5, pairsOf(v, "stage", "updatedAt")},
		{"seeded at another epoch: every field", func(w *writtenFields) {
			w.seed("t", 1, 5, hashOf(v))
		}, 2, 5, all},
		{"a field never seen is sent", func(w *writtenFields) {
			w.seed("t", 2, 5, hashOf(v, "stage", "-"))
		}, 2, 5, pairsOf(v, "stage")},
		{"recorded writes count", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{})
			w.record("t", 2, 6, &v, allRunFields)
		}, 2, 6, []any{}},
		{"a recorded write counts only the fields it sent", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{})
			w.record("t", 2, 6, &v, 1<<fStatus)
		}, 2, 6, all[2:]},
		{"forgotten: every field", func(w *writtenFields) {
			w.seed("t", 2, 5, hashOf(v))
			w.forget("t")
		}, 2, 5, all},
		{"cleared by an outage: every field", func(w *writtenFields) {
			w.seed("t", 2, 5, hashOf(v))
			w.clear()
		}, 2, 5, all},
		{"seeded at another version (another writer's change since): every field", func(w *writtenFields) {
			w.seed("t", 2, 4, hashOf(v))
		}, 2, 5, all},
		{"a recorded write that does not follow the known version forgets", func(w *writtenFields) {
			w.seed("t", 2, 4, hashOf(v))
			w.record("t", 2, 6, &v, 1<<fStatus)
		}, 2, 6, all},
		{"a value set back to what was written before is sent", func(w *writtenFields) {
			w.seed("t", 2, 5, hashOf(v))
			paused := writtenTestValues()
			paused.vals[fStatus] = "PAUSED"
			w.record("t", 2, 6, &paused, 1<<fStatus)
		}, 2, 6, pairsOf(v, "status")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w writtenFields
			tc.setup(&w)
			got, sent := w.diff("t", tc.fence, tc.version, &v, []any{})
			assert.Equal(t, tc.want, got)
			for i, name := range runFieldNames {
				assert.Equal(t, slices.Contains(fieldNames(tc.want), name), sent&(1<<i) != 0, "sent bit of %s", name)
			}
		})
	}
}

func TestWrittenFieldsAlwaysSendNewAttempts(t *testing.T) {
	t.Parallel()
	v := writtenTestValues()
	v.vals[fLedger] = "3"
	v.ledgerFrom, v.ledger = 2, []string{"2|1|1|0|5|s"}
	var w writtenFields
	w.seed("t", 2, 5, hashOf(v))
	require.Equal(t, 3, w.ledgerLen("t", 2, 5))
	got, sent := w.diff("t", 2, 5, &v, nil)
	require.Equal(t, []any{"l2", "2|1|1|0|5|s"}, got, "the fields are as written; the new attempt is sent")
	require.Zero(t, sent)
	require.Zero(t, w.ledgerLen("t", 2, 6), "nothing is known of another version")
}

func TestWrittenFieldsRecordWithoutSeedRemembersNothing(t *testing.T) {
	t.Parallel()
	var w writtenFields
	v := writtenTestValues()
	w.record("t", 1, 1, &v, allRunFields)
	require.Empty(t, w.tasks, "a partial write without a seed cannot stand for the whole hash")
}
