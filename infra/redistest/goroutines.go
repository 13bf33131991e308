package redistest

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SettledGoroutines returns the process's goroutine count once it has stayed the same for
// 50ms, so that goroutines still winding down from earlier tests are not in a baseline (for
// the leak checks of code that runs background loops against Redis).
func SettledGoroutines(t testing.TB) int {
	t.Helper()
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m != n {
			n, same = m, 0
			continue
		}
		if same++; same == 10 {
			return n
		}
	}
	require.FailNow(t, "goroutine count never settled")
	return 0
}

// RequireGoroutinesBackTo waits until the process runs no more goroutines than before, and
// fails with every goroutine's stack when it does not.
func RequireGoroutinesBackTo(t testing.TB, before int) {
	t.Helper()
	// Eventually runs the condition in a goroutine of its own, one at a time: discount it.
	if !assert.Eventually(t, func() bool { return runtime.NumGoroutine()-1 <= before },
		2*time.Second, 5*time.Millisecond, "goroutines: %d before", before) {
		buf := make([]byte, 1<<20)
		require.FailNow(t, "goroutine leak", "%d goroutines now, %d before:\n%s",
			runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}
