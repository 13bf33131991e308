package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/domain/stage"
)

// promAnswer is the Prometheus HTTP API's answer to an instant query.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// promSample is one sample of a vector result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// errBadQuery is the query refused by the server as invalid (400 bad_data): no retry, nor
// any later measurement, can help.
var errBadQuery = errors.New("the query is not valid")

// sample is one value of a result with its labels, for messages.
type sample struct {
	labels string
	value  float64
}

// queryOnce sends the query once (POST /api/v1/query, as Prometheus, Thanos, Mimir and
// VictoriaMetrics all take it) and reads its samples, sorted by their labels.
func (k *Prometheus) queryOnce(ctx context.Context, p promParams) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	form := url.Values{"query": {p.query}, "timeout": {p.timeout.String()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint().String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header = p.header.Clone()
	if p.host != "" {
		req.Host = p.host
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := k.http.client.Do(req)
	if err != nil {
		return nil, transportError(ctx, p.target(), err)
	}
	defer drainAndClose(resp.Body)
	body, err := k.http.readCapped(resp)
	if err != nil {
		return nil, transportError(ctx, p.target(), err)
	}
	if int64(len(body)) > k.http.maxBytes {
		return nil, fmt.Errorf("%s: the answer exceeds %d bytes", p.target(), k.http.maxBytes)
	}
	return decodeAnswer(p.target(), resp, body)
}

// decodeAnswer reads an instant query's answer.
func decodeAnswer(target string, resp *http.Response, body []byte) ([]sample, error) {
	var a promAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%s: %s, not a Prometheus API answer%s", target, resp.Status, snippet(body))
	}
	if a.Status != "success" {
		err := fmt.Errorf("%s: %s: %s: %s", target, resp.Status, a.ErrorType, a.Error)
		if a.ErrorType == "bad_data" && resp.StatusCode == http.StatusBadRequest {
			return nil, fmt.Errorf("%w: %w", errBadQuery, err)
		}
		return nil, err
	}
	switch a.Data.ResultType {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(a.Data.Result, &v); err != nil {
			return nil, fmt.Errorf("%s: a scalar that is not [time, value]: %w", target, err)
		}
		f, err := sampleValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
		return []sample{{value: f}}, nil
	case "vector":
		return decodeVector(target, a.Data.Result)
	}
	return nil, fmt.Errorf("%w: %s: the result is a %s: the query must give an instant vector or a scalar", errBadQuery, target, a.Data.ResultType)
}

// decodeVector reads a vector's samples, sorted by their labels.
func decodeVector(target string, raw json.RawMessage) ([]sample, error) {
	var in []promSample
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%s: a vector that is not a list of samples: %w", target, err)
	}
	out := make([]sample, 0, len(in))
	for _, s := range in {
		f, err := sampleValue(s.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
		out = append(out, sample{labels: labelText(s.Metric), value: f})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].labels < out[j].labels })
	return out, nil
}

// sampleValue reads a sample's [time, "value"].
func sampleValue(v [2]any) (float64, error) {
	s, ok := v[1].(string)
	if !ok {
		return 0, fmt.Errorf("a sample value that is not a string: %v", v[1])
	}
	f, err := strconv.ParseFloat(s, 64) // "NaN", "+Inf" too
	if err != nil {
		return 0, fmt.Errorf("a sample value that is not a number: %q", s)
	}
	return f, nil
}

// labelText is a sample's labels as PromQL writes them: {code="500",tenant="a"}.
func labelText(m map[string]string) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Quote(m[n])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// valueText is a result as a measurement shows it: its one value, or each sample with its
// labels; "empty" when there is none.
func valueText(samples []sample) string {
	switch len(samples) {
	case 0:
		return "empty"
	case 1:
		return strconv.FormatFloat(samples[0].value, 'g', 6, 64)
	}
	var b strings.Builder
	for i, s := range samples {
		if i > 0 {
			b.WriteString(", ")
		}
		if b.Len() > stage.MaxMeasurementText {
			fmt.Fprintf(&b, "and %d more", len(samples)-i)
			break
		}
		b.WriteString(s.labels + " " + strconv.FormatFloat(s.value, 'g', 6, 64))
	}
	return b.String()
}
