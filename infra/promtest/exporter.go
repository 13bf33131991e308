package promtest

import (
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exporter serves gauges a test sets on /metrics, for a Server to scrape: on a loopback port
// of its own, closed when the test ends.
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

// StartExporter starts an exporter with no metric yet.
func StartExporter(t testing.TB) *Exporter {
	t.Helper()
	e := &Exporter{t: t, reg: prometheus.NewRegistry(), gauges: map[string]*gauge{}}
	e.srv = httptest.NewServer(promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	t.Cleanup(e.srv.Close)
	return e
}

// Addr is the exporter's host:port, a scrape target.
func (e *Exporter) Addr() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// Set sets gauge name with labels to v. The first Set of a name fixes its label names; a
// later one with other names fails the test.
func (e *Exporter) Set(name string, labels map[string]string, v float64) {
	e.t.Helper()
	e.vec(name, labels).With(labels).Set(v)
}

// Delete removes the series of gauge name with labels: Prometheus marks it stale at its next
// scrape.
func (e *Exporter) Delete(name string, labels map[string]string) {
	e.t.Helper()
	e.vec(name, labels).Delete(labels)
}

func (e *Exporter) vec(name string, labels map[string]string) *prometheus.GaugeVec {
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
		g = &gauge{vec: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name + ", set by the test"}, names), labels: names}
		e.reg.MustRegister(g.vec)
		e.gauges[name] = g
	}
	if !slices.Equal(g.labels, names) {
		e.t.Fatalf("promtest: %s has labels %v, not %v", name, g.labels, names)
	}
	return g.vec
}
