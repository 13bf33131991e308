package redisrepo

import (
	"strconv"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// The hints hold at most maxLatestHints tenants, the newest always among them; a tenant's
// newer task replaces its older one; an id that is not a ULID is not kept.
func TestLatestHintsAreBounded(t *testing.T) {
	t.Parallel()
	h := newLatestHints()
	first := ulid.Make().String()
	h.put("tenant-0", first)
	got, ok := h.get("tenant-0")
	require.True(t, ok)
	require.Equal(t, first, got)

	newer := ulid.Make().String()
	h.put("tenant-0", newer)
	got, _ = h.get("tenant-0")
	require.Equal(t, newer, got)

	h.put("not-a-ulid", "task-1")
	_, ok = h.get("not-a-ulid")
	require.False(t, ok)

	var last string
	for i := 1; i <= maxLatestHints+100; i++ {
		last = ulid.Make().String()
		h.put("tenant-"+strconv.Itoa(i), last)
	}
	require.Len(t, h.ids, maxLatestHints)
	got, ok = h.get("tenant-" + strconv.Itoa(maxLatestHints+100))
	require.True(t, ok, "the newest is kept")
	require.Equal(t, last, got)
	_, ok = h.get("tenant-never")
	require.False(t, ok)
}
