package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// These tests drive run() directly to control the environment and standard input, which
// Main takes from the process.

func startTestServer(t *testing.T) string {
	t.Helper()
	return servertest.Start(t).URL()
}

func unusedURL(t *testing.T) string {
	t.Helper()
	// The port stays taken until the test ends (a closed port may be handed to another
	// parallel test's server meanwhile); every connection is dropped at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return "http://" + ln.Addr().String()
}

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

type outcome struct {
	code           int
	stdout, stderr string
}

func runWith(t *testing.T, stdin string, env map[string]string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, streams{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, getenv: envOf(env)})
	return outcome{code, stdout.String(), stderr.String()}
}

func TestServerFromEnvironment(t *testing.T) {
	t.Parallel()
	live, dead := startTestServer(t), unusedURL(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{name: "env used without the flag", env: map[string]string{EnvServer: live}, args: []string{"plan", "list"}, want: ExitOK},
		{name: "flag beats env", env: map[string]string{EnvServer: dead}, args: []string{"--server", live, "plan", "list"}, want: ExitOK},
		{name: "env pointing nowhere", env: map[string]string{EnvServer: dead}, args: []string{"plan", "list"}, want: ExitFailure},
		{name: "bad env URL is a usage error", env: map[string]string{EnvServer: "localhost"}, args: []string{"plan", "list"}, want: ExitUsage},
		{name: "token from env", env: map[string]string{EnvServer: live, EnvToken: "t0k"}, args: []string{"plan", "list"}, want: ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runWith(t, "", tt.env, tt.args...)
			assert.Equal(t, tt.want, o.code, "stderr: %s", o.stderr)
		})
	}
}

func TestTokenPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{name: "none", want: ""},
		{name: "env", env: map[string]string{EnvToken: "from-env"}, want: "Bearer from-env"},
		{name: "flag beats env", env: map[string]string{EnvToken: "from-env"}, args: []string{"--token", "from-flag"}, want: "Bearer from-flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got string
			srv := newHeaderRecorder(t, func(h string) { mu.Lock(); got = h; mu.Unlock() })
			env := map[string]string{EnvServer: srv}
			for k, v := range tt.env {
				env[k] = v
			}
			o := runWith(t, "", env, append(tt.args, "plan", "list")...)
			require.Equal(t, ExitOK, o.code, "stderr: %s", o.stderr)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tt.want, got)
		})
	}
}

// newHeaderRecorder serves an empty plan list and reports each request's Authorization.
func newHeaderRecorder(t *testing.T, seen func(string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"plans":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSubmitFromStdin(t *testing.T) {
	t.Parallel()
	url := startTestServer(t)
	tests := []struct {
		name, tenant, body string
	}{
		{name: "yaml", tenant: "stdin-y", body: "name: from-stdin\nstages:\n  - name: a\n    kind: noop\ntenants:\n  - id: stdin-y\n"},
		{name: "json", tenant: "stdin-j", body: `  {"name":"from-stdin","stages":[{"name":"a","kind":"noop"}],"tenants":[{"id":"stdin-j"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runWith(t, tt.body, nil, "--server", url, "submit", "-f", "-", "--wait", "-o", "json")
			require.Equal(t, ExitOK, o.code, "stderr: %s", o.stderr)
			var p wire.Plan
			require.NoError(t, json.Unmarshal([]byte(o.stdout), &p))
			assert.Equal(t, "from-stdin", p.Name)
			assert.Equal(t, "COMPLETED", p.Status)
		})
	}
}

func TestReadPlanContentType(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, file, body, want string
	}{
		{name: "yaml extension", file: "p.yaml", body: `{"name":"x"}`, want: client.ContentTypeYAML},
		{name: "yml extension", file: "p.YML", body: "name: x", want: client.ContentTypeYAML},
		{name: "json extension", file: "p.json", body: "name: x", want: client.ContentTypeJSON},
		{name: "other extension, json body", file: "p.plan", body: "\n {\"name\":\"x\"}", want: client.ContentTypeJSON},
		{name: "other extension, yaml body", file: "p.txt", body: "name: x", want: client.ContentTypeYAML},
		{name: "stdin json", file: "-", body: `{"name":"x"}`, want: client.ContentTypeJSON},
		{name: "stdin yaml", file: "-", body: "name: x", want: client.ContentTypeYAML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &invocation{streams: streams{stdin: strings.NewReader(tt.body)}}
			path := tt.file
			if path != "-" {
				path = dir + "/" + tt.name + "-" + tt.file
				require.NoError(t, os.WriteFile(path, []byte(tt.body), 0o600))
			}
			body, ct, err := a.readPlan(path)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(body))
			assert.Equal(t, tt.want, ct)
		})
	}
}

// serve logs JSON to a non-terminal stderr, serves on --addr, and shuts down cleanly when its
// context ends.
func TestServe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		// executor is the name the executor must report and log, when not empty.
		executor string
	}{
		{name: "flags", args: []string{"serve", "--addr", "127.0.0.1:0", "--workers", "4"}},
		{name: "name", args: []string{"serve", "--addr", "127.0.0.1:0", "--name", "cli-serve.1"}, executor: "cli-serve.1"},
		{name: "name env", env: map[string]string{EnvName: "cli_serve-2"}, args: []string{"serve", "--addr", "127.0.0.1:0"}, executor: "cli_serve-2"},
		{name: "env", env: map[string]string{EnvAddr: "127.0.0.1:0", EnvWorkers: "4"}, args: []string{"serve"}},
		{name: "flag beats env", env: map[string]string{EnvAddr: "256.0.0.1:1"}, args: []string{"serve", "--addr", "127.0.0.1:0"}},
		{name: "every interface with --insecure", args: []string{"serve", "--addr", "0.0.0.0:0", "--insecure"}},
		{name: "every interface with EXECUTOR_INSECURE", env: map[string]string{EnvInsecure: "true"}, args: []string{"serve", "--addr", "0.0.0.0:0"}},
		{name: "every interface with tokens", env: map[string]string{EnvTokens: "read:" + testReadToken + ",operate:" + testOperateToken}, args: []string{"serve", "--addr", "0.0.0.0:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr servertest.Buffer
			code := make(chan int, 1)
			go func() {
				code <- run(ctx, tt.args, streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: envOf(tt.env)})
			}()

			var addr string
			var logged map[string]any
			require.Eventually(t, func() bool {
				for _, line := range strings.Split(stderr.String(), "\n") {
					var rec map[string]any
					if json.Unmarshal([]byte(line), &rec) == nil && rec["addr"] != nil {
						addr, _ = rec["addr"].(string)
						logged = rec
						return addr != ""
					}
				}
				return false
			}, 10*time.Second, 10*time.Millisecond, "no JSON log line with the address; stderr: %s", stderr.String())

			h, err := client.New("http://"+addr, "", nil).Health(ctx)
			require.NoError(t, err)
			assert.Equal(t, "ok", h.Status)
			assert.NotEmpty(t, h.Executor, "the default name")
			assert.Equal(t, h.Executor, logged["executor"], "the log line names the executor")
			if tt.executor != "" {
				assert.Equal(t, tt.executor, h.Executor)
			}

			cancel()
			select {
			case c := <-code:
				assert.Equal(t, ExitOK, c, "stderr: %s", stderr.String())
			case <-time.After(35 * time.Second):
				t.Fatal("serve did not stop")
			}
			assert.Empty(t, stdout.String())
		})
	}
}

func TestServeUsageAndStartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int
		// names is text stderr must contain (the flag at fault), when not empty.
		names string
	}{
		{name: "workers env not a number", env: map[string]string{EnvWorkers: "many"}, args: []string{"serve"}, want: ExitUsage},
		{name: "negative workers", args: []string{"serve", "--workers", "-3"}, want: ExitUsage},
		{name: "positional argument", args: []string{"serve", "now"}, want: ExitUsage},
		{name: "address that cannot be listened on", args: []string{"serve", "--insecure", "--addr", "256.0.0.1:1"}, want: ExitFailure},
		{name: "redis URL that does not parse", args: []string{"serve", "--addr", "127.0.0.1:0", "--redis", "http://nope"}, want: ExitFailure},
		{name: "sentinel URL without master", args: []string{"serve", "--addr", "127.0.0.1:0", "--redis", "redis+sentinel://127.0.0.1:1"}, want: ExitFailure, names: "--redis"},
		{name: "cluster URL with a database", args: []string{"serve", "--addr", "127.0.0.1:0", "--redis", "redis://127.0.0.1:1/3", "--redis-cluster"}, want: ExitFailure, names: "--redis"},
		{name: "lease TTL too short", args: []string{"serve", "--lease-ttl", "1ms"}, want: ExitUsage},
		{name: "retention under a minute", args: []string{"serve", "--retention", "10s"}, want: ExitUsage, names: "--retention"},
		{name: "negative cache", args: []string{"serve", "--cache-tasks", "-1"}, want: ExitUsage, names: "--cache-tasks"},
		{name: "retention env not a duration", env: map[string]string{EnvRetention: "a week"}, args: []string{"serve"}, want: ExitUsage},
		{name: "topology neither shared nor alone", args: []string{"serve", "--topology", "maybe"}, want: ExitUsage},
		{name: "deprecated events stream flag not a bool", args: []string{"serve", "--events-stream=maybe"}, want: ExitUsage},
		{name: "deprecated events stream env not a bool", env: map[string]string{EnvEventsStream: "maybe"}, args: []string{"serve"}, want: ExitUsage},
		{name: "lease TTL env not a duration", env: map[string]string{EnvLeaseTTL: "soon"}, args: []string{"serve"}, want: ExitUsage},
		{name: "name that cannot be part of a key", args: []string{"serve", "--addr", "127.0.0.1:0", "--name", "a{b}"}, want: ExitUsage, names: "--name"},
		{name: "name env that cannot be part of a key", env: map[string]string{EnvName: "-x"}, args: []string{"serve", "--addr", "127.0.0.1:0"}, want: ExitUsage, names: "--name"},
		{name: "name too long", args: []string{"serve", "--addr", "127.0.0.1:0", "--name", strings.Repeat("n", 129)}, want: ExitUsage, names: "--name"},
		{name: "http allow-list entry that does not parse", args: []string{"serve", "--addr", "127.0.0.1:0", "--http-allow", "10.0.0.0/33"}, want: ExitUsage, names: "--http-allow"},
		{name: "prometheus allow-list entry that does not parse", args: []string{"serve", "--addr", "127.0.0.1:0", "--prometheus-allow", "http://prom:9090"}, want: ExitUsage, names: "--prometheus-allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runWith(t, "", tt.env, tt.args...)
			assert.Equal(t, tt.want, o.code, "stderr: %s", o.stderr)
			if tt.names != "" {
				assert.Contains(t, o.stderr, tt.names)
			}
		})
	}
}

// A node of a Redis Cluster given as one node is refused at start, with what to write.
func TestServeRefusesAClusterNodeGivenAsOneNode(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 0)
	o := runWith(t, "", nil, "serve", "--addr", "127.0.0.1:0", "--redis", c.SeedURL())
	assert.Equal(t, ExitFailure, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "Redis Cluster")
	assert.Contains(t, o.stderr, "--redis-cluster")
	assert.Contains(t, o.stderr, "?addr=")
}

// Secrets of the serve tests' tokens.
const (
	testReadToken    = "read-0123456789abcdef"
	testOperateToken = "operate-0123456789abcdef"
)

// serve refuses to listen beyond loopback without tokens (anyone reaching it could deploy),
// and refuses tokens it cannot read, naming where they came from; exit status 2.
func TestServeRefusesAnOpenNetwork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badFile := dir + "/tokens-bad"
	require.NoError(t, os.WriteFile(badFile, []byte("# tokens\nread:"+testReadToken+"\nadmin:"+testOperateToken+"\n"), 0o600))
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		names []string // what stderr must name
	}{
		{name: "every interface without tokens", args: []string{"serve", "--addr", "0.0.0.0:0"},
			names: []string{EnvTokens, "--tokens-file", "--insecure"}},
		{name: "an empty host without tokens", args: []string{"serve", "--addr", ":0"},
			names: []string{EnvTokens, "--tokens-file", "--insecure"}},
		{name: "an address from the environment without tokens", env: map[string]string{EnvAddr: "0.0.0.0:0"}, args: []string{"serve"},
			names: []string{EnvTokens, "--tokens-file", "--insecure"}},
		{name: "a tokens file with a bad line", args: []string{"serve", "--tokens-file", badFile},
			names: []string{"--tokens-file", badFile, "line 3"}},
		{name: "a tokens file from the environment with a bad line", env: map[string]string{EnvTokensFile: badFile}, args: []string{"serve"},
			names: []string{badFile, "line 3"}},
		{name: "a tokens file that does not exist", args: []string{"serve", "--tokens-file", dir + "/nope"},
			names: []string{"--tokens-file", dir + "/nope"}},
		{name: "a bad token in EXECUTOR_TOKENS", env: map[string]string{EnvTokens: "operate:short"}, args: []string{"serve"},
			names: []string{EnvTokens}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runWith(t, "", tt.env, tt.args...)
			assert.Equal(t, ExitUsage, o.code, "stderr: %s", o.stderr)
			for _, name := range tt.names {
				assert.Contains(t, o.stderr, name)
			}
			assert.NotContains(t, o.stderr, testOperateToken, "a secret is never printed")
		})
	}
}
