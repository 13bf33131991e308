package promtest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exporter serves the gauges a test sets on /metrics (a client_golang registry of its own),
// for a Server to scrape: on a loopback port of its own, closed when the test ends. It is safe
// for concurrent use.
type Exporter struct {
	t      testing.TB
	srv    *httptest.Server
	reg    *prometheus.Registry
	mu     sync.Mutex
	gauges map[string]*gauge
}

type gauge struct {
	vec    *prometheus.GaugeVec
	labels []string
}

// StartExporter starts an exporter with no metric yet, on a free loopback port; it is closed
// when the test ends.
func StartExporter(t testing.TB) *Exporter {
	t.Helper()
	e := &Exporter{t: t, reg: prometheus.NewRegistry(), gauges: map[string]*gauge{}}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// Addr is the exporter's host:port, a scrape target.
func (e *Exporter) Addr() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// Set sets gauge name with labels to v. The first Set of a name fixes its label names (labels'
// keys, sorted); a later one with other names fails the test. Safe for concurrent use.
func (e *Exporter) Set(name string, labels map[string]string, v float64) {
	e.t.Helper()
	e.lookup(name, labels, true).With(labels).Set(v)
}

// Delete removes the series of gauge name with labels (a name never set has none): Prometheus
// marks it stale at its next scrape, and an instant query no longer answers it. Other label
// names than the first Set's fail the test.
func (e *Exporter) Delete(name string, labels map[string]string) {
	e.t.Helper()
	if vec := e.lookup(name, labels, false); vec != nil {
		vec.Delete(labels)
	}
}

// lookup returns gauge name's vector, made if create (nil if not and there is none), and
// fails the test when labels' names are not the vector's.
func (e *Exporter) lookup(name string, labels map[string]string, create bool) *prometheus.GaugeVec {
	e.t.Helper()
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	slices.Sort(names)
	e.mu.Lock()
	defer e.mu.Unlock()
	g, ok := e.gauges[name]
	if !ok {
		if !create {
			return nil
		}
		g = &gauge{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name + ", set by the test"}, names), labels: names}
		if err := e.reg.Register(g.vec); err != nil {
			e.t.Fatalf("promtest: gauge %s%v: %v", name, names, err)
		}
		e.gauges[name] = g
	}
	if !slices.Equal(g.labels, names) {
		e.t.Fatalf("promtest: gauge %s has the labels %v, not %v", name, g.labels, names)
	}
	return g.vec
}
