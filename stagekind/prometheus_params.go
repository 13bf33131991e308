package stagekind

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// Bounds of a prometheus stage's params.
const (
	// MaxQueryLength bounds a query's text, in bytes.
	MaxQueryLength = 16 << 10
	// DefaultQueryTimeout bounds one query when queryTimeout is not set.
	DefaultQueryTimeout = 10 * time.Second
	// MaxQueryTimeout is the longest queryTimeout.
	MaxQueryTimeout = 5 * time.Minute
	// QueryTries is how many times a measurement sends its query before an error (the server
	// unreachable, a 5xx, a timeout) makes it inconclusive; QueryRetryWait is the wait between.
	QueryTries     = 3
	QueryRetryWait = time.Second
)

// promParams are a prometheus stage's params, checked.
type promParams struct {
	address *url.URL // the API's base: /api/v1/query is under it
	query   string
	header  http.Header
	host    string
	token   string // bearerToken
	timeout time.Duration
	judge   promJudge
	policy  stage.Analysis
}

// promParamNames are the prometheus kind's params.
var promParamNames = append([]string{"address", "query", "successCondition", "failureCondition", "headers",
	"bearerToken", "queryTimeout"}, stage.AnalysisParams...)

// parsePromParams reads a prometheus stage's params (ring: those of a ring's analysis, which
// has no count).
func parsePromParams(params map[string]any, ring bool) (promParams, error) {
	if err := checkKnownParams(params, promParamNames...); err != nil {
		return promParams{}, err
	}
	var p promParams
	var err error
	if p.address, err = promAddress(params); err != nil {
		return p, err
	}
	if p.query, err = promQuery(params); err != nil {
		return p, err
	}
	if p.header, p.host, err = parseHeaders(params); err != nil {
		return p, err
	}
	if raw, ok := params["bearerToken"]; ok && raw != nil {
		s, ok := raw.(string)
		if !ok || !validHeaderValue(s) {
			return p, paramError("bearerToken", "must be a string without control characters (usually {{secret \"name\"}})")
		}
		p.token = s
	}
	if p.header.Get("Authorization") != "" && p.token != "" {
		return p, paramError("bearerToken", "and headers.Authorization cannot both be given")
	}
	if p.timeout, err = durationParam(params, "queryTimeout", "queryTimeout", DefaultQueryTimeout, 100*time.Millisecond, MaxQueryTimeout); err != nil {
		return p, err
	}
	if p.judge, err = parsePromJudge(params); err != nil {
		return p, err
	}
	if p.policy, err = stage.ParseAnalysis(params, ring); err != nil {
		var fe *stage.FieldError
		if errors.As(err, &fe) {
			return p, paramError(fe.Field, fe.Reason)
		}
		return p, err
	}
	p.judge.onEmpty = p.policy.OnEmpty
	return p, nil
}

// promAddress reads address, the Prometheus HTTP API's base URL (no query or fragment).
func promAddress(params map[string]any) (*url.URL, error) {
	raw, ok := params["address"]
	s, isString := raw.(string)
	if !ok || !isString || s == "" {
		return nil, paramError("address", "is required: the Prometheus (or Thanos, Mimir, VictoriaMetrics) base URL, such as http://prometheus:9090")
	}
	u, err := absoluteURL("address", s)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, paramError("address", "must be a base URL without a query or fragment: /api/v1/query is added to it")
	}
	return u, nil
}

// promQuery reads query, a PromQL expression.
func promQuery(params map[string]any) (string, error) {
	s, ok := params["query"].(string)
	switch {
	case !ok || strings.TrimSpace(s) == "":
		return "", paramError("query", "is required: a PromQL expression")
	case len(s) > MaxQueryLength:
		return "", paramError("query", fmt.Sprintf("must be at most %d bytes", MaxQueryLength))
	}
	return s, nil
}

// parsePromJudge reads the conditions: at least one of successCondition and failureCondition.
func parsePromJudge(params map[string]any) (promJudge, error) {
	var j promJudge
	var err error
	if j.success, err = promConditions.parse(params, "successCondition"); err != nil {
		return j, err
	}
	if j.failure, err = promConditions.parse(params, "failureCondition"); err != nil {
		return j, err
	}
	if j.success == nil && j.failure == nil {
		return j, paramError("successCondition", "or failureCondition is required: an expression over result, such as result < 0.01")
	}
	return j, nil
}

// target names the queries in messages: the API's URL without credentials.
func (p promParams) target() string {
	u := p.endpoint()
	u.User = nil
	return u.String()
}

// endpoint is the instant query's URL.
func (p promParams) endpoint() *url.URL {
	u := *p.address
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/query"
	u.RawPath = ""
	return &u
}
