package cli

import (
	"context"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server/servertest"
)

// One SIGTERM to the process, which main's signal.NotifyContext turns into the end of serve's
// context and which serve's own signal channel receives as well, is one signal: a graceful
// shutdown, not one cut short as if a second had come (a SIGTERM'd executor then ended its
// running tasks INTERRUPTED instead of handing them back: an end-to-end test caught it).
// Not parallel: the signal goes to the whole test process, and every serve running in it
// would take it; parallel tests run after this one.
func TestServeTakesOneSignalOnce(t *testing.T) {
	for i := range 10 { // the two deliveries race: either may come first
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		var stdout, stderr servertest.Buffer
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: envOf(nil)})
		}()
		require.Eventually(t, func() bool { return strings.Contains(stderr.String(), `"msg":"executor serving"`) },
			10*time.Second, 10*time.Millisecond, "round %d: serve did not start; stderr: %s", i, stderr.String())
		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
		select {
		case c := <-code:
			assert.Equal(t, ExitOK, c, "round %d", i)
		case <-time.After(30 * time.Second):
			stop()
			t.Fatalf("round %d: serve did not stop after SIGTERM; stderr: %s", i, stderr.String())
		}
		stop()
		assert.NotContains(t, stderr.String(), "cut short", "round %d: one signal taken for two", i)
		assert.Contains(t, stderr.String(), `"msg":"executor stopped"`, "round %d", i)
	}
}
