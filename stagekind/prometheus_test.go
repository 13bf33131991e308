package stagekind

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// These tests read answers of the Prometheus HTTP API a test server writes, to cover what a
// real server rarely gives (NaN, several samples, a matrix, garbage); the kind against a real
// Prometheus is tested in server/analysis_test.go.

// vectorAnswer is an instant vector answer of the given values, tenant "t0", "t1", ...
func vectorAnswer(values ...string) string {
	samples := make([]string, len(values))
	for i, v := range values {
		samples[i] = fmt.Sprintf(`{"metric":{"tenant":"t%d"},"value":[1700000000.5,%q]}`, i, v)
	}
	return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(samples, ",") + `]}}`
}

// promServer answers every query with the next of answers (the last one again once spent),
// recording the queries.
func promServer(t *testing.T, answers ...string) (string, *atomic.Int64, <-chan url.Values) {
	t.Helper()
	var n atomic.Int64
	queries := make(chan url.Values, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		select {
		case queries <- r.PostForm:
		default:
		}
		i := min(int(n.Add(1))-1, len(answers)-1)
		status, body, _ := strings.Cut(answers[i], " ")
		code := 200
		_, _ = fmt.Sscanf(status, "%d", &code)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n, queries
}

func ok(body string) string { return "200 " + body }

func promParamsFor(address string, extra map[string]any) map[string]any {
	p := map[string]any{"address": address, "query": `error_ratio{tenant="a"}`, "successCondition": "result < 0.01", "interval": "1s"}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func TestPrometheusMeasurementVerdicts(t *testing.T) {
	t.Parallel()
	k := NewPrometheus(PrometheusOptions{})
	for _, tc := range []struct {
		name    string
		answer  string
		params  map[string]any
		verdict stage.Verdict
		value   string
		message string
	}{
		{"success held", ok(vectorAnswer("0.001")), nil, stage.VerdictSuccessful, "0.001", "successCondition `result < 0.01` held"},
		{"success not held fails", ok(vectorAnswer("0.2")), nil, stage.VerdictFailed, "0.2", "did not hold"},
		{"failure held", ok(vectorAnswer("0.07")), map[string]any{"failureCondition": "result >= 0.05"}, stage.VerdictFailed, "0.07", "failureCondition `result >= 0.05` held"},
		{"between the two is inconclusive", ok(vectorAnswer("0.02")), map[string]any{"failureCondition": "result >= 0.05"}, stage.VerdictInconclusive, "0.02", "neither"},
		{"failure alone not held passes", ok(vectorAnswer("0.02")), map[string]any{"successCondition": nil, "failureCondition": "result >= 0.05"}, stage.VerdictSuccessful, "0.02", "did not hold"},
		{"scalar", ok(`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"0.005"]}}`), nil, stage.VerdictSuccessful, "0.005", "held"},
		{"empty is inconclusive", ok(vectorAnswer()), nil, stage.VerdictInconclusive, "empty", "no sample"},
		{"empty as configured", ok(vectorAnswer()), map[string]any{"onEmpty": "failed"}, stage.VerdictFailed, "empty", "no sample"},
		{"NaN is no data", ok(vectorAnswer("NaN")), nil, stage.VerdictInconclusive, "NaN", "no sample"},
		{"several samples compared as one", ok(vectorAnswer("0.001", "0.5")), nil, stage.VerdictInconclusive, `{tenant="t0"} 0.001, {tenant="t1"} 0.5`, "several samples"},
		{"several samples, all", ok(vectorAnswer("0.001", "0.5")), map[string]any{"successCondition": "all(result, # < 0.01)"}, stage.VerdictFailed, "", "did not hold"},
		{"several samples, indexed", ok(vectorAnswer("0.001", "0.5")), map[string]any{"successCondition": "result[0] < 0.01 && len(result) == 2"}, stage.VerdictSuccessful, "", "held"},
		{"arithmetic on one sample", ok(vectorAnswer("0.004")), map[string]any{"successCondition": "result * 100 < 1"}, stage.VerdictSuccessful, "", "held"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, _, _ := promServer(t, tc.answer)
			params := promParamsFor(addr, tc.params)
			for k, v := range tc.params {
				if v == nil {
					delete(params, k)
				}
			}
			m, err := k.Measure(context.Background(), params)
			require.NoError(t, err)
			assert.Equal(t, tc.verdict, m.Verdict)
			if tc.value != "" {
				assert.Equal(t, tc.value, m.Value)
			}
			assert.Contains(t, m.Message, tc.message)
			assert.WithinDuration(t, time.Now(), m.At, 10*time.Second)
		})
	}
}

func TestPrometheusQuerySentAsTheAPIWantsIt(t *testing.T) {
	t.Parallel()
	var got http.Header
	var path string
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got, path = r.Header.Clone(), r.URL.Path
		_, _ = io.WriteString(w, vectorAnswer("0"))
	})
	k := NewPrometheus(PrometheusOptions{})
	_, err := k.Measure(context.Background(), promParamsFor(srv.URL+"/prom/", map[string]any{
		"bearerToken": "s3cret", "headers": map[string]any{"X-Scope-OrgID": "team-a"},
	}))
	require.NoError(t, err)
	assert.Equal(t, "/prom/api/v1/query", path, "the API under the address's path")
	assert.Equal(t, "Bearer s3cret", got.Get("Authorization"))
	assert.Equal(t, "team-a", got.Get("X-Scope-OrgID"))
	assert.Equal(t, "application/x-www-form-urlencoded", got.Get("Content-Type"))

	_, err = k.Run(context.Background(), testRequest(promParamsFor(srv.URL, nil)))
	require.NoError(t, err)
	assert.Equal(t, "tenant-001:0", got.Get(FenceHeader), "a stage's query carries its fence")
	assert.Equal(t, testRequest(nil).IdempotencyKey(), got.Get("Idempotency-Key"))
}

func TestPrometheusErrorsAreRetriedThenInconclusive(t *testing.T) {
	t.Parallel()
	addr, n, _ := promServer(t, `503 {"status":"error","errorType":"unavailable","error":"overloaded"}`)
	k := NewPrometheus(PrometheusOptions{})
	m, err := k.Measure(context.Background(), promParamsFor(addr, nil))
	require.NoError(t, err)
	assert.Equal(t, stage.VerdictInconclusive, m.Verdict)
	assert.Contains(t, m.Message, "overloaded")
	assert.EqualValues(t, QueryTries, n.Load(), "sent again before giving up")

	addr, n, _ = promServer(t, "502 <html>bad gateway</html>", ok(vectorAnswer("0")))
	m, err = k.Measure(context.Background(), promParamsFor(addr, nil))
	require.NoError(t, err)
	assert.Equal(t, stage.VerdictSuccessful, m.Verdict, "the second try answered")
	assert.EqualValues(t, 2, n.Load())
}

func TestPrometheusInvalidQueryFailsPermanently(t *testing.T) {
	t.Parallel()
	k := NewPrometheus(PrometheusOptions{})
	for name, answer := range map[string]string{
		"bad_data": `400 {"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}`,
		"matrix":   ok(`{"status":"success","data":{"resultType":"matrix","result":[]}}`),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr, n, _ := promServer(t, answer)
			_, err := k.Measure(context.Background(), promParamsFor(addr, nil))
			var se *stage.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, stage.ClassPermanent, se.Class)
			assert.EqualValues(t, 1, n.Load(), "not sent again")
		})
	}
}

func TestPrometheusStageRunsCountMeasurements(t *testing.T) {
	t.Parallel()
	k := NewPrometheus(PrometheusOptions{})
	addr, n, queries := promServer(t, ok(vectorAnswer("0.001")), ok(vectorAnswer("0.5")), ok(vectorAnswer("0.002")))
	var tr stage.Transcript
	req := testRequest(promParamsFor(addr, map[string]any{"count": 3, "failureLimit": 1}))
	req.Transcribe = func(t stage.Transcript) { tr = t }
	out, err := k.Run(context.Background(), req)
	require.NoError(t, err, "one failure is within failureLimit 1")
	assert.EqualValues(t, 3, n.Load())
	assert.Equal(t, `error_ratio{tenant="a"}`, (<-queries).Get("query"))
	var got struct {
		Verdict      string `json:"verdict"`
		Successful   int    `json:"successful"`
		Failed       int    `json:"failed"`
		Value        string `json:"value"`
		Measurements []struct {
			Verdict string `json:"verdict"`
			Value   string `json:"value"`
		} `json:"measurements"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, "successful", got.Verdict)
	assert.Equal(t, 2, got.Successful)
	assert.Equal(t, 1, got.Failed)
	assert.Equal(t, "0.002", got.Value)
	require.Len(t, got.Measurements, 3)
	assert.Equal(t, "failed", got.Measurements[1].Verdict)
	lines := strings.Split(strings.TrimSpace(tr.Stdout), "\n")
	require.Len(t, lines, 3, "every measurement in the transcript")
	assert.Contains(t, lines[1], "failed value=0.5")
}

func TestPrometheusStageFailsAtOnceBeyondItsLimits(t *testing.T) {
	t.Parallel()
	k := NewPrometheus(PrometheusOptions{})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		addr, n, _ := promServer(t, ok(vectorAnswer("0.5")))
		_, err := k.Run(context.Background(), testRequest(promParamsFor(addr, map[string]any{"count": 5})))
		var se *stage.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, stage.ClassAnalysis, se.Class)
		assert.False(t, se.Class.Retryable())
		assert.Contains(t, se.Message, "1 of 1 measurements failed (failureLimit 0)")
		assert.Contains(t, se.Message, `error_ratio{tenant="a"}`, "the query")
		assert.Contains(t, se.Message, "0.5", "the value")
		assert.EqualValues(t, 1, n.Load(), "no measurement after the analysis failed")
	})
	t.Run("inconclusive", func(t *testing.T) {
		t.Parallel()
		addr, _, _ := promServer(t, ok(vectorAnswer()))
		_, err := k.Run(context.Background(), testRequest(promParamsFor(addr, map[string]any{"count": 5, "inconclusiveLimit": 0})))
		var se *stage.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, stage.ClassRetryable, se.Class, "retried under the stage's policy")
		assert.Contains(t, se.Message, "analysis inconclusive")
	})
}

func TestPrometheusParams(t *testing.T) {
	t.Parallel()
	allow, err := ParseAllowList([]string{"prometheus.internal"})
	require.NoError(t, err)
	k := NewPrometheus(PrometheusOptions{AllowList: allow})
	base := func(extra map[string]any) map[string]any {
		p := map[string]any{"address": "http://prometheus.internal:9090", "query": "up", "successCondition": "result == 1"}
		for key, v := range extra {
			if v == nil {
				delete(p, key)
			} else {
				p[key] = v
			}
		}
		return p
	}
	require.NoError(t, k.ValidateParams(base(nil)))
	require.NoError(t, k.ValidateAnalysis(base(nil)))
	for _, tc := range []struct {
		name  string
		extra map[string]any
		ring  bool
		field string
	}{
		{"no address", map[string]any{"address": nil}, false, "address"},
		{"address with a query", map[string]any{"address": "http://prometheus.internal/?x=1"}, false, "address"},
		{"address denied", map[string]any{"address": "http://10.0.0.1:9090"}, false, "address"},
		{"no query", map[string]any{"query": " "}, false, "query"},
		{"no condition", map[string]any{"successCondition": nil}, false, "successCondition"},
		{"condition not an expression", map[string]any{"successCondition": "result <"}, false, "successCondition"},
		{"condition not a bool", map[string]any{"failureCondition": "result + 1"}, false, "failureCondition"},
		{"unknown param", map[string]any{"treshold": 1}, false, "treshold"},
		{"count on a ring", map[string]any{"count": 2}, true, "count"},
		{"interval too short", map[string]any{"interval": "1ms"}, false, "interval"},
		{"token and authorization", map[string]any{"bearerToken": "x", "headers": map[string]any{"Authorization": "Basic y"}}, false, "bearerToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check := k.ValidateParams
			if tc.ring {
				check = k.ValidateAnalysis
			}
			err := check(base(tc.extra))
			require.ErrorIs(t, err, ErrInvalidParams)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}
