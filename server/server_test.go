package server_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
)

func TestShutdownEndsOpenLongPolls(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", ShutdownTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, srv.Start(context.Background()))

	body := `{"name":"slow","stages":[{"name":"bake","kind":"sleep","params":{"duration":"1m"}}],"tenants":[{"id":"slow-1"}]}`
	resp, err := http.Post(srv.URL()+"/v1/plans", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	location := resp.Header.Get("Location")
	resp.Body.Close()
	require.NotEmpty(t, location)

	polled := make(chan error, 1)
	go func() {
		resp, err := http.Get(srv.URL() + location + "?wait=5m")
		if err == nil {
			resp.Body.Close()
		}
		polled <- err
	}()
	time.Sleep(100 * time.Millisecond) // the long poll is waiting

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, srv.Stop(ctx))
	assert.Less(t, time.Since(start), 4*time.Second, "shutdown did not wait for the long poll's deadline")
	select {
	case <-polled:
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll did not end")
	}
}
