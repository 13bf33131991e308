package redistest

import (
	"net"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A redis-server that cannot listen because another process took its port is told apart
// from one that does not answer, so Start picks another port instead of failing the test.
func TestStartTellsATakenPort(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, InstallHint)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	s := &Server{t: t, bin: bin, port: ln.Addr().(*net.TCPAddr).Port, dir: t.TempDir()}
	t.Cleanup(s.Kill)
	require.ErrorIs(t, s.start(), errPortTaken)
	assert.False(t, s.running(), "the failed process is gone")

	started := Start(t) // and Start itself answers on the port it ends up with
	require.NoError(t, started.Client().Ping(t.Context()).Err())
}
