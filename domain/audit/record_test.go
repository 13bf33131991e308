package audit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/audit"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func valid() audit.Fields {
	return audit.Fields{Origin: audit.Origin{Actor: "alice"}, Action: "pause", PlanID: "01JWNNT770AZ1EYD5Q5D0CJJGQ"}
}

func TestNewChecksTheRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*audit.Fields)
		ok   bool
	}{
		{"a plan's action", func(*audit.Fields) {}, true},
		{"a tenant's action of no plan", func(f *audit.Fields) { f.PlanID, f.Tenant = "", "acme" }, true},
		{"no action", func(f *audit.Fields) { f.Action = "" }, false},
		{"no actor", func(f *audit.Fields) { f.Origin.Actor = "" }, false},
		{"no plan nor tenant", func(f *audit.Fields) { f.PlanID = "" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := valid()
			tt.edit(&f)
			r, err := audit.New(f, now)
			if !tt.ok {
				require.ErrorIs(t, err, audit.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Len(t, r.ID(), 26)
			assert.Equal(t, now, r.Fields().At)
			assert.Equal(t, audit.Pending, r.Outcome().Result)
		})
	}
}

func TestLoadChecksTheStoredRecord(t *testing.T) {
	t.Parallel()
	f := valid()
	f.ID = "not-a-ulid"
	_, err := audit.Load(f, audit.Outcome{})
	require.ErrorIs(t, err, audit.ErrInvalid)
	r, err := audit.New(valid(), now)
	require.NoError(t, err)
	_, err = audit.Load(r.Fields(), audit.Outcome{Result: "maybe"})
	require.ErrorIs(t, err, audit.ErrInvalid)
}

func TestSettleOnce(t *testing.T) {
	t.Parallel()
	r, err := audit.New(valid(), now)
	require.NoError(t, err)
	require.ErrorIs(t, r.Settle(audit.Outcome{}), audit.ErrInvalid, "a pending outcome")
	require.NoError(t, r.Settle(audit.Outcome{Result: audit.Refused, Code: "forbidden", At: now}))
	require.ErrorIs(t, r.Settle(audit.Outcome{Result: audit.Applied, At: now}), audit.ErrSettled)
	assert.Equal(t, "forbidden", r.Outcome().Code)
}

func TestTextsAreBounded(t *testing.T) {
	t.Parallel()
	f := valid()
	for range audit.MaxAttrs + 3 {
		f.Request = append(f.Request, audit.Attr{Key: "comment", Value: strings.Repeat("é", audit.MaxText)})
	}
	r, err := audit.New(f, now)
	require.NoError(t, err)
	got := r.Fields().Request
	require.Len(t, got, audit.MaxAttrs)
	assert.LessOrEqual(t, len(got[0].Value), audit.MaxText)
	assert.True(t, strings.HasSuffix(got[0].Value, "…"))
	assert.True(t, strings.ToValidUTF8(got[0].Value, "?") == got[0].Value, "cut at a rune boundary")
}

func TestCursorRoundTrips(t *testing.T) {
	t.Parallel()
	for _, c := range []audit.Cursor{{PlanID: "01JWNNT770AZ1EYD5Q5D0CJJGQ", Pos: "17-0"}, {Pos: "4"}} {
		got, ok, err := audit.ParseCursor(c.String())
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, c, got)
	}
	_, ok, err := audit.ParseCursor("")
	require.NoError(t, err)
	assert.False(t, ok)
	_, _, err = audit.ParseCursor("no-slash")
	require.ErrorIs(t, err, audit.ErrInvalid)
	assert.Equal(t, audit.DefaultLimit, audit.PageLimit(0))
	assert.Equal(t, audit.MaxLimit, audit.PageLimit(audit.MaxLimit+1))
}
