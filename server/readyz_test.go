package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// getReadyz returns GET /readyz's status code and body.
func getReadyz(t *testing.T, base string) (int, wire.Health) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h wire.Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return resp.StatusCode, h
}

// /readyz is ok only when a write and a read succeed through the client in use now: a Redis
// that refuses writes (out of memory), or a master of a cluster that is gone, is not ready
// at once, before any traffic made the executor degraded.
func TestReadyzWritesAndReadsThroughTheClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start func(t *testing.T) (url string, cluster bool, breakIt func(), mend func())
	}{
		{name: "one node out of memory", start: func(t *testing.T) (string, bool, func(), func()) {
			rs := redistest.Start(t)
			c := rs.Client()
			set := func(v string) {
				require.NoError(t, c.ConfigSet(context.Background(), "maxmemory", v).Err())
			}
			require.NoError(t, c.ConfigSet(context.Background(), "maxmemory-policy", "noeviction").Err())
			return rs.URL(), false, func() { set("1") }, func() { set("0") }
		}},
		{name: "cluster master frozen", start: func(t *testing.T) (string, bool, func(), func()) {
			cl := redistest.StartCluster(t, 3, 0)
			masters := cl.Masters()
			return cl.URL(), true, func() {
					for _, m := range masters {
						m.Freeze()
					}
				}, func() {
					for _, m := range masters {
						m.Thaw()
					}
				}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, cluster, breakIt, mend := tt.start(t)
			srv := servertest.With(t, server.Config{RedisURL: url, RedisCluster: cluster})
			code, h := getReadyz(t, srv.URL())
			require.Equal(t, http.StatusOK, code, "%+v", h)
			require.Equal(t, "ok", h.Redis)

			breakIt()
			code, h = getReadyz(t, srv.URL())
			require.Equal(t, http.StatusServiceUnavailable, code, "%+v", h)
			require.NotEqual(t, "ok", h.Redis)
			require.NotEmpty(t, h.Reason)

			mend()
			require.Eventually(t, func() bool {
				code, _ := getReadyz(t, srv.URL())
				return code == http.StatusOK
			}, 20e9, 100e6, "ready again once Redis takes writes")
		})
	}
}
