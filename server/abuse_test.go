package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// Sizes of the abuse run.
const (
	abuseRequests = 10_000
	abuseWorkers  = 8
)

// abuseResult is what one malformed request got.
type abuseResult struct {
	req         abuseRequest
	status      int
	contentType string
	body        string // the first bytes
	err         error  // the exchange itself failed
}

// 10,000 malformed requests, generated deterministically across every route of the API, to an
// executor on a real Redis: no 5xx, no panic in the log, every 4xx a problem, no Redis key
// created (nothing but what the executor wrote at start-up), and every route exercised.
func TestTenThousandMalformedRequestsCreateNothing(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{
		RedisURL:     rs.URL(),
		Logger:       slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxBodyBytes: abuseMaxBody,
		Limits: app.Limits{
			MaxTenants: abuseMaxTenants, MaxStages: abuseMaxStages, MaxParamsBytes: abuseMaxParamsBytes,
		},
	})
	rdb := rs.Client()
	before := redisKeys(t, rdb)

	routes := apiRoutes(t)
	require.GreaterOrEqual(t, len(routes), 19, "every route of api/router.go: %v", routes)
	gen := &abuseGen{rng: rand.New(rand.NewPCG(2024, 7))}
	reqs := make([]abuseRequest, abuseRequests)
	submit := abuseRoute{http.MethodPost, "/v1/plans"}
	require.Contains(t, routes, submit)
	for i := range reqs {
		route := routes[gen.rng.IntN(len(routes))]
		if gen.rng.IntN(5) < 2 { // the richest route gets 40 % of the requests
			route = submit
		}
		reqs[i] = gen.request(route)
	}

	results := sendAbuse(t, srv.URL(), reqs)

	perRoute := map[string]int{}
	perKind := map[string]int{}
	perStatus := map[int]int{}
	for _, res := range results {
		perRoute[res.req.route.String()]++
		perKind[res.req.kind]++
		perStatus[res.status]++
		what := fmt.Sprintf("%s %.200s (%s, %d-byte body %.100q)", res.req.method, res.req.target, res.req.kind, len(res.req.body), res.req.body)
		if !assert.NoError(t, res.err, what) {
			continue
		}
		assert.Less(t, res.status, 500, "%s: %s", what, res.body)
		assert.NotEqual(t, http.StatusCreated, res.status, "%s created something: %s", what, res.body)
		if res.req.kind != "path" && res.req.kind != "method" { // plans, events and retries: all refused
			assert.GreaterOrEqual(t, res.status, 400, "%s was accepted: %s", what, res.body)
		}
		if res.status >= 400 {
			assert.Equal(t, wire.ProblemContentType, res.contentType, "%s: %d %s", what, res.status, res.body)
		}
	}
	for _, r := range routes {
		assert.Positive(t, perRoute[r.String()], "route %s was never abused", r)
	}
	t.Logf("statuses: %v", perStatus)
	t.Logf("kinds: %v", perKind)

	assert.NotContains(t, strings.ToLower(logs.String()), "panic", "the server log mentions a panic")
	assert.Equal(t, before, redisKeys(t, rdb), "no Redis key was created (only the start-up's: %v)", before)
}

// sendAbuse sends every request with a pool of workers and returns what each got.
func sendAbuse(t *testing.T, base string, reqs []abuseRequest) []abuseResult {
	t.Helper()
	client := &http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: abuseWorkers},
	}
	t.Cleanup(client.CloseIdleConnections)
	results := make([]abuseResult, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range abuseWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = sendOne(client, base, reqs[i])
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func sendOne(client *http.Client, base string, r abuseRequest) abuseResult {
	res := abuseResult{req: r}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
		if r.chunked {
			body = io.MultiReader(body) // no length known: sent chunked
		}
	}
	req, err := http.NewRequestWithContext(context.Background(), r.method, base+r.target, body)
	if err != nil {
		res.err = fmt.Errorf("building the request: %w", err)
		return res
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	res.status, res.contentType, res.body = resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	return res
}

// redisKeys returns every key of the Redis database, sorted.
func redisKeys(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	sort.Strings(keys)
	return keys
}
