package cas_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/cas"
)

var errConflict = errors.New("conflict")

func TestUpdate(t *testing.T) {
	t.Parallel()
	errFn := errors.New("refused")
	tests := []struct {
		name      string
		conflicts int   // saves that lose before one wins
		fnErr     error // what fn returns
		wantErr   error
		wantReads int
	}{
		{"saved at once", 0, nil, nil, 1},
		{"read and applied again after each lost race", 3, nil, nil, 4},
		{"a refused transition saves nothing", 0, errFn, errFn, 1},
		{"gives up after MaxTries lost races", cas.MaxTries, nil, errConflict, cas.MaxTries},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reads, saves, lost := 0, 0, 0
			got, err := cas.Update(
				func() (*int, error) { reads++; v := reads; return &v, nil },
				func(*int) error { return tt.fnErr },
				func(*int) error {
					if lost < tt.conflicts {
						lost++
						return errConflict
					}
					saves++
					return nil
				},
				errConflict)
			assert.Equal(t, tt.wantReads, reads)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Zero(t, saves)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, reads, *got, "the copy read last is the one saved")
			assert.Equal(t, 1, saves)
		})
	}
}
