package api

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/errcode"
)

// TestEveryCodeHasOneAnswer fails when an error code is added without its line in
// problemKinds (it would be answered as a 500), or listed twice.
func TestEveryCodeHasOneAnswer(t *testing.T) {
	t.Parallel()
	seen := map[errcode.Code]int{}
	for _, k := range problemKinds {
		seen[k.code]++
		assert.NotEmpty(t, k.typ, "code %s", k.code)
		assert.GreaterOrEqual(t, k.status, 400, "code %s", k.code)
	}
	for _, c := range errcode.All {
		assert.Equal(t, 1, seen[c], "code %s", c)
	}
	assert.Len(t, seen, len(errcode.All), "problemKinds lists a code errcode does not")
}
