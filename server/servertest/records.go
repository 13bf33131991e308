package servertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// JSONRecords decodes log output written by slog's JSON handler, one record per line; a line
// that is not one JSON record fails the test.
func JSONRecords(t testing.TB, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "a log line is one JSON record: %q", line)
		out = append(out, rec)
	}
	return out
}
