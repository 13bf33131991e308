package stagekind

import (
	"context"
	"encoding/json"

	"github.com/executor-dev/executor/domain/stage"
)

// KindNoop is the kind name of Noop.
const KindNoop = "noop"

// Noop is the noop kind: it succeeds at once with a null output and ignores its params.
type Noop struct{}

// Run returns a nil output, or ctx's error when ctx is already done.
func (Noop) Run(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, nil
}
