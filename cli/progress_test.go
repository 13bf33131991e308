package cli

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plan  wire.Plan
		width int
		want  string
	}{
		{
			name: "running, 45 percent",
			plan: wire.Plan{Status: "RUNNING", Progress: map[string]int{
				"total": 20, "PENDING": 6, "RUNNING": 5, "COMPLETED": 8, "FAILED": 1, "PAUSED": 0,
			}},
			want: "RUNNING    [#########-----------]  45%  9/20  PENDING=6 RUNNING=5 COMPLETED=8 FAILED=1",
		},
		{
			name: "pending, nothing done",
			plan: wire.Plan{Status: "PENDING", Progress: map[string]int{"total": 3, "PENDING": 3}},
			want: "PENDING    [--------------------]   0%  0/3  PENDING=3",
		},
		{
			name: "completed",
			plan: wire.Plan{Status: "COMPLETED", Progress: map[string]int{"total": 3, "COMPLETED": 3}},
			want: "COMPLETED  [####################] 100%  3/3  COMPLETED=3",
		},
		{
			name: "cancelled and failed count as done, interrupted does not",
			plan: wire.Plan{Status: "FAILED", Progress: map[string]int{
				"total": 4, "CANCELLED": 1, "FAILED": 1, "INTERRUPTED": 2,
			}},
			want: "FAILED     [##########----------]  50%  2/4  FAILED=1 CANCELLED=1 INTERRUPTED=2",
		},
		{
			name: "unknown statuses come last, sorted",
			plan: wire.Plan{Status: "RUNNING", Progress: map[string]int{"total": 2, "RUNNING": 1, "ZOMBIE": 1, "AWAKE": 0}},
			want: "RUNNING    [--------------------]   0%  0/2  RUNNING=1 ZOMBIE=1",
		},
		{
			name: "empty terminal plan is full",
			plan: wire.Plan{Status: "COMPLETED", Progress: map[string]int{"total": 0}},
			want: "COMPLETED  [####################] 100%  0/0",
		},
		{
			name: "empty running plan is empty",
			plan: wire.Plan{Status: "RUNNING"},
			want: "RUNNING    [--------------------]   0%  0/0",
		},
		{
			name:  "cut to width minus one so it never wraps",
			plan:  wire.Plan{Status: "RUNNING", Progress: map[string]int{"total": 2, "RUNNING": 1, "COMPLETED": 1}},
			width: 40,
			want:  "RUNNING    [##########----------]  50%",
		},
		{
			name:  "wide enough: not cut",
			plan:  wire.Plan{Status: "RUNNING", Progress: map[string]int{"total": 2, "RUNNING": 1, "COMPLETED": 1}},
			width: 200,
			want:  "RUNNING    [##########----------]  50%  1/2  RUNNING=1 COMPLETED=1",
		},
		{
			name:  "tiny terminal",
			plan:  wire.Plan{Status: "RUNNING", Progress: map[string]int{"total": 1, "RUNNING": 1}},
			width: 1,
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := progressLine(tt.plan, tt.width)
			assert.Equal(t, tt.want, got)
			if tt.width > 0 {
				assert.Less(t, utf8.RuneCountInString(got), tt.width)
			}
		})
	}
}
