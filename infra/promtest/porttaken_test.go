package promtest

import (
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A prometheus that cannot listen because another process took its port is told apart from
// one that does not get ready, so Start picks another port instead of failing the test; the
// failed process is gone.
func TestStartTellsATakenPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.NotFoundHandler()} // answers, but is not Prometheus
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	s := &Server{t: t, bin: binary(t), dir: t.TempDir(), port: ln.Addr().(*net.TCPAddr).Port}
	require.NoError(t, os.WriteFile(s.path("prometheus.yml"), []byte(config(nil)), 0o644))
	t.Cleanup(s.Kill)
	require.ErrorIs(t, s.start(), errPortTaken)
	require.Nil(t, s.proc, "the failed process is gone")
	require.Contains(t, s.logTail(), "address already in use")
}
