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

// Bounds and defaults of an http stage's poll.
const (
	// DefaultPollInterval is the wait between two polls when poll.interval is not set.
	DefaultPollInterval = 5 * time.Second
	// MinPollInterval is the shortest poll.interval.
	MinPollInterval = 100 * time.Millisecond
	// DefaultPollTimeout bounds the polling when poll.timeout is not set.
	DefaultPollTimeout = 10 * time.Minute
	// MaxPollTimeout is the longest poll.timeout.
	MaxPollTimeout = 24 * time.Hour
)

// pollParams are an http stage's poll params, checked.
type pollParams struct {
	method   string
	url      string // a template reading .Response (rendered during the attempt), a URL, or "": the Location header
	interval time.Duration
	timeout  time.Duration
	until    *condition
	failWhen *condition
}

// parsePoll reads params["poll"], nil when absent.
func parsePoll(params map[string]any) (*pollParams, error) {
	raw, ok := params["poll"]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, paramError("poll", fmt.Sprintf("must be an object {url, method, interval, timeout, until, failWhen}, not %T", raw))
	}
	if err := checkKnownParams(m, "url", "method", "interval", "timeout", "until", "failWhen"); err != nil {
		return nil, prefixed("poll.", err)
	}
	p := &pollParams{method: http.MethodGet, interval: DefaultPollInterval, timeout: DefaultPollTimeout}
	var err error
	if p.method, err = parseMethod(m); err != nil {
		return nil, prefixed("poll.", err)
	}
	if p.url, err = pollURL(m); err != nil {
		return nil, err
	}
	if p.interval, err = pollDuration(m, "interval", p.interval, MinPollInterval, MaxPollTimeout); err != nil {
		return nil, err
	}
	if p.timeout, err = pollDuration(m, "timeout", p.timeout, MinPollInterval, MaxPollTimeout); err != nil {
		return nil, err
	}
	if p.until, err = parseCondition(m, "until"); err != nil {
		return nil, prefixed("poll.", err)
	}
	if p.until == nil {
		return nil, paramError("poll.until", "is required: the condition over the polled response that says the work is done")
	}
	if p.failWhen, err = parseCondition(m, "failWhen"); err != nil {
		return nil, prefixed("poll.", err)
	}
	return p, nil
}

// pollURL reads poll.url: a template is checked when it is rendered, a plain URL now.
func pollURL(m map[string]any) (string, error) {
	raw, ok := m["url"]
	if !ok || raw == nil || raw == "" {
		return "", nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", paramError("poll.url", fmt.Sprintf("must be a string, not %T", raw))
	}
	if strings.Contains(s, "{{") {
		return s, nil
	}
	if _, err := absoluteURL("poll.url", s); err != nil {
		return "", err
	}
	return s, nil
}

// absoluteURL parses s, which must be an absolute http or https URL with a host.
func absoluteURL(field, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, paramError(field, fmt.Sprintf("is not a valid URL: %v", err))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, paramError(field, fmt.Sprintf("must be an absolute http or https URL, got %q", s))
	case u.Host == "":
		return nil, paramError(field, fmt.Sprintf("must have a host, got %q", s))
	}
	return u, nil
}

// pollDuration reads poll.<name>, a duration within [least, most], def when absent.
func pollDuration(m map[string]any, name string, def, least, most time.Duration) (time.Duration, error) {
	return durationParam(m, name, "poll."+name, def, least, most)
}

// durationParam reads m[name], a duration within [least, most], def when absent; its error
// names field.
func durationParam(m map[string]any, name, field string, def, least, most time.Duration) (time.Duration, error) {
	raw, ok := m[name]
	if !ok || raw == nil || raw == "" {
		return def, nil
	}
	s, _ := raw.(string)
	d, err := time.ParseDuration(s)
	if err != nil || d < least || d > most {
		return 0, paramError(field, fmt.Sprintf(`must be a duration such as "5s", from %s to %s`, least, most))
	}
	return d, nil
}

// prefixed returns err, a params error, with its field under prefix ("poll.").
func prefixed(prefix string, err error) error {
	var fe *stage.FieldError
	if errors.As(err, &fe) {
		return paramError(prefix+fe.Field, fe.Reason)
	}
	return err
}
