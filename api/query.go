package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
)

// pathParam returns the URL path parameter name, unescaped ("a%3Ab" is "a:b"). The use cases
// validate it, so a bad id is a 400 naming the parameter before it reaches a store key.
func pathParam(r *http.Request, name string) (string, error) {
	v, err := url.PathUnescape(chi.URLParam(r, name))
	if err != nil {
		return "", invalid(name, "is not a valid URL path segment")
	}
	return v, nil
}

// queryInt returns ?name= as an integer in [lo, hi], or def when it is absent or empty.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, invalid(name, fmt.Sprintf("must be an integer between %d and %d", lo, hi))
	}
	return n, nil
}

// queryBool returns ?name= as a boolean ("true", "false", "1", "0", ...); false when absent.
func queryBool(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, invalid(name, "must be true or false")
	}
	return b, nil
}

// queryDuration returns ?name= as a Go duration ("30s") and whether it was given.
func queryDuration(r *http.Request, name string) (time.Duration, bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false, invalid(name, fmt.Sprintf("%q is not a duration such as \"30s\"", s))
	}
	return d, true, nil
}

// includeTaskIDs reads ?include=: "taskIds" asks for a plan's every task id, which a plan's
// JSON leaves out by default (a 100,000-tenant plan's ids weigh 2.8 MB).
func includeTaskIDs(r *http.Request) (bool, error) {
	s := r.URL.Query().Get("include")
	switch s {
	case "":
		return false, nil
	case "taskIds":
		return true, nil
	}
	return false, invalid("include", fmt.Sprintf("%q is not something a plan can include; the one choice is taskIds", s))
}

// filterOf is the task filter of a listing's query: ?status= (comma-separated, any case),
// ?stage=, ?class=, ?tenant= (a prefix).
func filterOf(q url.Values) app.TaskFilter {
	f := app.TaskFilter{Stage: q.Get("stage"), Class: q.Get("class"), Tenant: q.Get("tenant")}
	for _, s := range strings.Split(q.Get("status"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			f.Statuses = append(f.Statuses, task.Status(strings.ToUpper(s)))
		}
	}
	return f
}
