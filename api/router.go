package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/wire"
)

// DefaultMaxBodyBytes bounds a request body: a 100,000-tenant submission (DefaultMaxTenants)
// with a few variables per tenant fits.
const DefaultMaxBodyBytes = 32 << 20

// Options tunes the HTTP API. The zero value is usable.
type Options struct {
	MaxBodyBytes int64 // default DefaultMaxBodyBytes
	// Name is the serving executor's name, reported by GET /healthz and GET /readyz.
	Name   string
	Logger *slog.Logger // default slog.Default()
	// EventHeartbeat is how often GET /v1/events writes a heartbeat comment; default
	// DefaultEventHeartbeat.
	EventHeartbeat time.Duration
	// Readiness reports the body of GET /readyz; a Status other than "ok" answers 503.
	// Default: {"status":"ok","redis":"disabled"} (the in-memory store).
	Readiness func() wire.Health
	// Probe, when set, is asked by GET /readyz after Readiness said ok: a write and a read
	// through the store's client (Redis), whose error makes /readyz answer 503 with it as
	// the reason. Readiness alone (cheap: it also labels 503 problems) reports what the
	// executor learnt from its traffic; Probe checks now.
	Probe func(ctx context.Context) error
	// Unavailable, when set, tells an error that means the store is unreachable or refusing
	// to serve (a Redis outage) from the others: such an error answers 503 `unavailable`,
	// never 500, even before the executor switched to degraded (the executor passes
	// outage.Is).
	Unavailable func(error) bool
	// Console, when set, is the web console: it is served at / and /assets/* (GET only).
	// Unset, / is a 404 like any unknown path.
	Console http.Handler
	// Metrics, when set, is the Prometheus exposition served at GET /metrics.
	Metrics http.Handler
	// ObserveRequest, when set, is told of every request once it is answered: its chi route
	// pattern (UnmatchedRoute when no route handled it), method, status code and duration.
	ObserveRequest func(route, method string, code int, d time.Duration)
	// MaxEventStreams caps the GET /v1/events streams open at once (default
	// DefaultMaxEventStreams), MaxEventStreamsPerClient those of one client address (default
	// DefaultMaxEventStreamsPerClient): beyond, 429 busy with Retry-After.
	MaxEventStreams, MaxEventStreamsPerClient int
	// Auth, when it holds tokens, makes every route but GET /healthz, GET /readyz and
	// POST /login need one (auth.go); with a Console it also serves POST /login and
	// POST /logout. Nil or empty: the API is open.
	Auth *auth.Keys
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxEventStreams <= 0 {
		o.MaxEventStreams = DefaultMaxEventStreams
	}
	if o.MaxEventStreamsPerClient <= 0 {
		o.MaxEventStreamsPerClient = DefaultMaxEventStreamsPerClient
	}
	if o.EventHeartbeat <= 0 {
		o.EventHeartbeat = DefaultEventHeartbeat
	}
	if o.Readiness == nil {
		o.Readiness = func() wire.Health { return wire.Health{Status: "ok", Redis: "disabled"} }
	}
	return o
}

// handlers holds what every handler needs; the handlers are its methods, one file per resource.
type handlers struct {
	svc     *app.Service
	opts    Options
	streams *streamSlots // the event streams open
}

// NewRouter returns the HTTP API of docs/design.md §7 over svc.
func NewRouter(svc *app.Service, opts Options) http.Handler {
	h := &handlers{svc: svc, opts: opts.withDefaults()}
	h.streams = newStreamSlots(h.opts.MaxEventStreams, h.opts.MaxEventStreamsPerClient)
	r := chi.NewRouter()
	r.Use(h.requestID, h.observe, h.authenticate, h.origin, h.recoverer)
	// Set before the routes so that every sub-router inherits them.
	r.NotFound(unmatched(h.notFound))
	r.MethodNotAllowed(unmatched(h.methodNotAllowed(r)))

	r.Get("/healthz", h.healthz)
	r.Get("/readyz", h.readyz)
	// Probes may ask with HEAD: the same status and headers, no body (net/http drops it).
	r.Head("/healthz", h.healthz)
	r.Head("/readyz", h.readyz)
	if m := h.opts.Metrics; m != nil {
		r.Get("/metrics", m.ServeHTTP)
	}
	if c := h.opts.Console; c != nil {
		r.Get("/", h.console(c))
		r.Get("/assets/*", h.console(c))
		if h.opts.Auth.Enabled() {
			r.Post("/login", h.login)
			r.Post("/logout", h.logout)
		}
	}

	r.Route("/v1/plans", func(r chi.Router) {
		r.Post("/", h.submitPlan)
		r.Get("/", h.listPlans)
		r.Route("/{planId}", func(r chi.Router) {
			r.Get("/", h.getPlan)
			r.Get("/tasks", h.planTasks)
			for _, a := range app.BulkActions {
				r.Post("/tasks/"+string(a), h.bulkTasks(a))
			}
			r.Get("/summary", h.planSummary)
			r.Get("/notifications", h.planNotifications)
			r.Post("/pause", h.planOp((*app.Service).PausePlan))
			r.Post("/resume", h.resumePlan)
			r.Post("/cancel", h.planOp((*app.Service).CancelPlan))
			r.Post("/retry", h.retryPlan)
			r.Post("/approve", h.planOp((*app.Service).ApprovePlan))
			r.Post("/reject", h.rejectPlan)
		})
	})
	r.Route("/v1/tenants/{tenantId}", func(r chi.Router) {
		r.Get("/task", h.tenantTask)
		r.Get("/checkpoint", h.tenantCheckpoint)
		r.Post("/retry", h.retryTenant)
		r.Post("/rollback", h.tenantOp((*app.Service).RollbackTenant))
		r.Post("/pause", h.tenantOp((*app.Service).PauseTenant))
		r.Post("/resume", h.tenantOp((*app.Service).ResumeTenant))
		r.Post("/cancel", h.tenantOp((*app.Service).CancelTenant))
		r.Post("/skip", h.skipTenant)
		r.Post("/approve", h.decideTenant((*app.Service).ApproveTenant))
		r.Post("/reject", h.decideTenant((*app.Service).RejectTenant))
		r.Get("/lock", h.tenantLock)
		r.Post("/unlock", h.unlockTenant)
	})
	r.Get("/v1/events", h.streamEvents)
	r.Get("/v1/audit", h.auditTrail)
	r.Route("/v1/executors", func(r chi.Router) {
		r.Get("/", h.listExecutors)
	})
	r.Route("/v1/tasks", func(r chi.Router) {
		r.Get("/{taskId}", h.getTask)
	})
	r.Get("/v1/task-statuses", h.taskStatuses)
	return r
}

// notFound answers routes that do not exist.
func (h *handlers) notFound(w http.ResponseWriter, r *http.Request) {
	h.writeError(w, r, &requestError{
		status: http.StatusNotFound, typ: wire.ProblemNotFound,
		detail: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path),
	})
}

// methodNotAllowed answers a known route called with a method it does not serve, with the
// Allow header listing the methods it does serve.
func (h *handlers) methodNotAllowed(routes chi.Routes) http.HandlerFunc {
	// Built on first use, once every route is registered.
	index := sync.OnceValue(func() *chi.Mux { return routeIndex(routes) })
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
			http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if index().Find(chi.NewRouteContext(), m, path) != "" {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		h.writeError(w, r, &requestError{
			status: http.StatusMethodNotAllowed, typ: wire.ProblemMethodNotAllowed,
			detail: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path),
		})
	}
}

// routeIndex flattens routes into a mux used only to look routes up: chi's Find does not
// tell methods apart on the path of a mounted sub-router ("/v1/plans").
func routeIndex(routes chi.Routes) *chi.Mux {
	index := chi.NewRouter()
	_ = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		index.Method(method, route, http.NotFoundHandler())
		if trimmed := strings.TrimSuffix(route, "/"); trimmed != "" && trimmed != route {
			index.Method(method, trimmed, http.NotFoundHandler())
		}
		return nil
	})
	return index
}
