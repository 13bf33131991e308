package repotest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/audit"
)

// The audit part of the contract: a record is listed as appended, with the outcome it was
// settled with (none: pending); listings are newest first, filtered, paged by cursor without
// a record lost or repeated; without a plan, every plan's records, the newest plans first,
// those of no plan last; a plan keeps at most audit.MaxPerPlan.

var auditTests = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"Audit/AppendSettleList", testAuditAppendSettleList},
	{"Audit/Filters", testAuditFilters},
	{"Audit/Paging", testAuditPaging},
	{"Audit/EveryPlan", testAuditEveryPlan},
	{"Audit/BadCursor", testAuditBadCursor},
	{"Audit/Bounded", testAuditBounded},
	{"Audit/Forget", testAuditForget},
}

// testAuditForget: the records of a plan never created go; another plan's stay.
func testAuditForget(t *testing.T, s Store) {
	kept := createPlan(t, s, "", at(0))
	a := record(t, s, kept.ID(), "", "bob", "submit", at(1))
	ghost := "01JWNNT770AZ1EYD5Q5D0CJJGQ"
	record(t, s, ghost, "", "bob", "submit", at(2))
	require.NoError(t, s.Audit.Forget(t.Context(), ghost))
	assert.Empty(t, listAll(t, s, audit.Query{PlanID: ghost}))
	assert.Equal(t, []string{a.ID()}, recordIDs(listAll(t, s, audit.Query{PlanID: kept.ID()})))
}

// record appends a record of action by actor on plan planID (tenant "" for a plan-wide one)
// made at at.
func record(t *testing.T, s Store, planID, tenant, actor, action string, at time.Time, req ...audit.Attr) *audit.Record {
	t.Helper()
	r, err := audit.New(audit.Fields{
		Origin: audit.Origin{Actor: actor, Role: "operate", RequestID: "req-" + action, Executor: "ex-1"},
		Action: action, PlanID: planID, Tenant: tenant, Request: req,
	}, at)
	require.NoError(t, err)
	require.NoError(t, s.Audit.Append(t.Context(), r))
	return r
}

// listAll follows q's pages to the end, limit records a page, and returns the records.
func listAll(t *testing.T, s Store, q audit.Query) []*audit.Record {
	t.Helper()
	var out []*audit.Record
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the pages never end")
		page, err := s.Audit.List(t.Context(), q)
		require.NoError(t, err)
		out = append(out, page.Records...)
		if page.Next == "" {
			return out
		}
		require.NotEmpty(t, page.Records, "a page with a Next holds records")
		q.Cursor = page.Next
	}
}

func recordIDs(recs []*audit.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID()
	}
	return out
}

func testAuditAppendSettleList(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	submit := record(t, s, p.ID(), "", "bob", "submit", at(1))
	approve := record(t, s, p.ID(), "t-1", "alice", "approve", at(2), audit.Attr{Key: "comment", Value: "looks good"})
	cut := record(t, s, p.ID(), "t-2", "alice", "cancel", at(3))
	require.NoError(t, submit.Settle(audit.Outcome{Result: audit.Applied, At: at(4),
		Attrs: []audit.Attr{{Key: "tenants", Value: "2"}}}))
	require.NoError(t, s.Audit.Settle(t.Context(), submit))
	require.NoError(t, approve.Settle(audit.Outcome{Result: audit.Refused, At: at(5), Code: "forbidden"}))
	require.NoError(t, s.Audit.Settle(t.Context(), approve))

	page, err := s.Audit.List(t.Context(), audit.Query{PlanID: p.ID()})
	require.NoError(t, err)
	require.Len(t, page.Records, 3)
	assert.Empty(t, page.Next)
	assert.Equal(t, []string{cut.ID(), approve.ID(), submit.ID()}, recordIDs(page.Records), "newest first")
	for i, want := range []*audit.Record{cut, approve, submit} {
		got := page.Records[i]
		assert.Equal(t, want.Fields(), got.Fields(), "record %d", i)
		assert.Equal(t, want.Outcome(), got.Outcome(), "outcome of record %d", i)
	}
	assert.Equal(t, audit.Pending, page.Records[0].Outcome().Result, "an action whose outcome was never written")
	require.ErrorIs(t, submit.Settle(audit.Outcome{Result: audit.Applied}), audit.ErrSettled)
}

func testAuditFilters(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	a := record(t, s, p.ID(), "", "bob", "submit", at(1))
	b := record(t, s, p.ID(), "t-1", "alice", "approve", at(2))
	c := record(t, s, p.ID(), "t-2", "alice", "cancel", at(3))
	d := record(t, s, p.ID(), "t-1", "bob", "retry", at(4))
	tests := []struct {
		name string
		q    audit.Query
		want []*audit.Record
	}{
		{"plan", audit.Query{PlanID: p.ID()}, []*audit.Record{d, c, b, a}},
		{"actor", audit.Query{PlanID: p.ID(), Actor: "alice"}, []*audit.Record{c, b}},
		{"action", audit.Query{PlanID: p.ID(), Action: "submit"}, []*audit.Record{a}},
		{"tenant", audit.Query{PlanID: p.ID(), Tenant: "t-1"}, []*audit.Record{d, b}},
		{"tenant and actor", audit.Query{PlanID: p.ID(), Tenant: "t-1", Actor: "bob"}, []*audit.Record{d}},
		{"no plan given", audit.Query{Actor: "bob"}, []*audit.Record{d, a}},
		{"nothing matches", audit.Query{PlanID: p.ID(), Actor: "carol"}, nil},
		{"another plan", audit.Query{PlanID: "01J00000000000000000000000"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, recordIDs(tt.want), recordIDs(listAll(t, s, tt.q)))
		})
	}
}

func testAuditPaging(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	var want []string
	for i := range 7 {
		actor := "alice"
		if i%2 == 1 {
			actor = "bob"
		}
		r := record(t, s, p.ID(), fmt.Sprintf("t-%d", i), actor, "retry", at(1+i))
		want = append([]string{r.ID()}, want...)
	}
	got := listAll(t, s, audit.Query{PlanID: p.ID(), Limit: 3})
	assert.Equal(t, want, recordIDs(got), "three pages of 3, 3 and 1, newest first")

	page, err := s.Audit.List(t.Context(), audit.Query{PlanID: p.ID(), Limit: 3})
	require.NoError(t, err)
	require.Len(t, page.Records, 3)
	require.NotEmpty(t, page.Next)

	alice := listAll(t, s, audit.Query{PlanID: p.ID(), Actor: "alice", Limit: 2})
	assert.Equal(t, []string{want[0], want[2], want[4], want[6]}, recordIDs(alice), "a filtered listing, paged")
}

func testAuditEveryPlan(t *testing.T, s Store) {
	older := createPlan(t, s, "", at(0))
	newer := createPlan(t, s, "", at(10))
	a := record(t, s, older.ID(), "", "bob", "submit", at(1))
	b := record(t, s, newer.ID(), "", "bob", "submit", at(11))
	c := record(t, s, older.ID(), "t-1", "alice", "pause", at(12))
	u := record(t, s, "", "t-9", "alice", "unlock", at(13))
	want := []string{b.ID(), c.ID(), a.ID(), u.ID()}
	for _, limit := range []int{1, 2, 10} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			assert.Equal(t, want, recordIDs(listAll(t, s, audit.Query{Limit: limit})),
				"the newest plan's, then the older plan's, then those of no plan")
		})
	}
	assert.Equal(t, []string{u.ID()}, recordIDs(listAll(t, s, audit.Query{Tenant: "t-9"})))
}

func testAuditBadCursor(t *testing.T, s Store) {
	for _, cursor := range []string{"nonsense", "/", "x/"} {
		_, err := s.Audit.List(t.Context(), audit.Query{Cursor: cursor})
		require.ErrorIs(t, err, audit.ErrInvalid, cursor)
	}
}

func testAuditBounded(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	first := record(t, s, p.ID(), "t-0", "alice", "retry", at(1))
	var last *audit.Record
	for i := range audit.MaxPerPlan + 4 {
		last = record(t, s, p.ID(), "t-1", "bob", "retry", at(2).Add(time.Duration(i)*time.Millisecond))
	}
	page, err := s.Audit.List(t.Context(), audit.Query{PlanID: p.ID(), Tenant: "t-0"})
	require.NoError(t, err)
	assert.Empty(t, page.Records, "the oldest record went beyond the bound: %s", first.ID())
	page, err = s.Audit.List(t.Context(), audit.Query{PlanID: p.ID(), Limit: 1})
	require.NoError(t, err)
	require.Len(t, page.Records, 1)
	assert.Equal(t, last.ID(), page.Records[0].ID())
	n := len(listAll(t, s, audit.Query{PlanID: p.ID(), Limit: audit.MaxLimit}))
	assert.Equal(t, audit.MaxPerPlan, n)
}
