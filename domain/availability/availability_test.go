package availability_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/availability"
)

func TestPhaseDecidesInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state availability.State
		want  availability.Phase
	}{
		{"up", availability.Up(), availability.Online},
		{"never reached", availability.State{}, availability.NotReady},
		{"draining before everything", availability.State{Draining: true, Degraded: true}, availability.Draining},
		{"not reached before degraded", availability.State{Degraded: true}, availability.NotReady},
		{"degraded before claims paused", availability.State{Reached: true, Degraded: true, ClaimsPaused: time.Second}, availability.Degraded},
		{"claims paused", availability.State{Reached: true, ClaimsPaused: time.Second}, availability.ClaimsPaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.state.Phase())
		})
	}
}

func TestFuncIsAPort(t *testing.T) {
	t.Parallel()
	got := availability.Func(func() availability.State { return availability.State{Reached: true, Draining: true} }).Availability()
	assert.Equal(t, availability.Draining, got.Phase())
}
