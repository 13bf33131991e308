package promtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// client is the harness's HTTP client: no kept-alive connection (so no goroutine) outlives a
// request.
var client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// answer is the body of /api/v1/query.
type answer struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// Query runs an instant query (now) and returns its samples' values, in Prometheus's order: a
// vector's, or a scalar's one. An empty vector is no value and no error.
func (s *Server) Query(q string) ([]float64, error) {
	resp, err := client.PostForm(s.URL()+"/api/v1/query", url.Values{"query": {q}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return nil, fmt.Errorf("query %s: %s: %w", q, resp.Status, err)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("query %s: %s: %s", q, resp.Status, a.Error)
	}
	return values(a.Data.ResultType, a.Data.Result)
}

// values reads a scalar's or a vector's values.
func values(kind string, raw json.RawMessage) ([]float64, error) {
	var pairs [][2]any
	switch kind {
	case "scalar":
		var p [2]any
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	case "vector":
		var samples []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(raw, &samples); err != nil {
			return nil, err
		}
		for _, x := range samples {
			pairs = append(pairs, x.Value)
		}
	default:
		return nil, fmt.Errorf("a %s result, not a vector or a scalar", kind)
	}
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		str, _ := p[1].(string)
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// WaitValue polls query until its first value (a vector's first sample, or a scalar) satisfies
// want: until Prometheus has scraped what the test set. It fails t after timeout with the last
// answer.
func (s *Server) WaitValue(t testing.TB, query string, want func(float64) bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		vals, err := s.Query(query)
		if err == nil && len(vals) > 0 && want(vals[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("promtest: %s on %s did not give the value wanted within %s: last answer %v, error %v",
				query, s, timeout, vals, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
