package redisrepo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoredTimesSortAsTimesAndRoundTrip(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 21, 10, 0, 5, 0, time.UTC)
	times := []time.Time{base, base.Add(100 * time.Millisecond), base.Add(123456789), base.Add(time.Second)}
	for i := 1; i < len(times); i++ {
		assert.Less(t, encTime(times[i-1]), encTime(times[i]), "%s before %s", times[i-1], times[i])
	}
	for _, tm := range times {
		got, err := decTime(encTime(tm))
		require.NoError(t, err)
		assert.True(t, tm.Equal(got))
	}
	assert.Empty(t, encTime(time.Time{}))
}
