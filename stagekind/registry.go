package stagekind

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"

	"github.com/executor-dev/executor/domain/stage"
)

// KindPattern is what a kind name must match to be registered.
var KindPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// Registry errors, matched with errors.Is.
var (
	// ErrDuplicateKind is returned by Register when the kind already has a handler.
	ErrDuplicateKind = errors.New("stage kind already registered")
	// ErrInvalidKind is returned by Register for a name that does not match KindPattern or a
	// nil handler.
	ErrInvalidKind = errors.New("invalid stage kind")
)

// Registry maps stage kind names to handlers. It is safe for concurrent use; the zero value is
// not usable, use NewRegistry or Builtin.
//
// Registering a handler is how Go users add their own kinds:
//
//	reg := stagekind.Builtin(stagekind.HTTPOptions{})
//	if err := reg.Register("cache-purge", stage.HandlerFunc(purge)); err != nil {
//		log.Fatal(err) // ErrDuplicateKind or ErrInvalidKind
//	}
//	h, ok := reg.Handler("cache-purge")
//
// A handler that also implements stage.ParamValidator has its params checked at plan
// submission.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]stage.Handler
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{handlers: make(map[string]stage.Handler)}
}

// Builtin returns a new Registry holding the built-in kinds noop, sleep, http (configured by
// opts), approval and exec (disabled: see BuiltinWith). More kinds can be registered on it.
func Builtin(opts HTTPOptions) *Registry {
	return BuiltinWith(Options{HTTP: opts})
}

// Options configures the built-in kinds.
type Options struct {
	HTTP HTTPOptions
	// Exec configures the exec kind; without an allow-list it is disabled (every plan that
	// names it is refused, the field named).
	Exec ExecOptions
	// Prometheus configures the prometheus kind (analyses of metrics).
	Prometheus PrometheusOptions
}

// BuiltinWith returns a new Registry holding the built-in kinds noop, sleep, http, approval,
// exec and prometheus, configured by opts. More kinds can be registered on it.
func BuiltinWith(opts Options) *Registry {
	r := NewRegistry()
	for kind, h := range map[string]stage.Handler{
		KindNoop:       Noop{},
		KindSleep:      Sleep{},
		KindHTTP:       NewHTTP(opts.HTTP),
		KindApproval:   Approval{},
		KindExec:       NewExec(opts.Exec),
		KindPrometheus: NewPrometheus(opts.Prometheus),
	} {
		if err := r.Register(kind, h); err != nil {
			panic(err) // unreachable: the built-in names are valid and distinct
		}
	}
	return r
}

// Register adds h as the handler of kind. It fails with an error wrapping ErrInvalidKind when
// kind does not match KindPattern or h is nil, and ErrDuplicateKind when kind is taken.
func (r *Registry) Register(kind string, h stage.Handler) error {
	if !KindPattern.MatchString(kind) {
		return fmt.Errorf("%w: %q must match %s", ErrInvalidKind, kind, KindPattern)
	}
	if h == nil {
		return fmt.Errorf("%w: %q has a nil handler", ErrInvalidKind, kind)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.handlers[kind]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicateKind, kind)
	}
	r.handlers[kind] = h
	return nil
}

// Handler returns the handler of kind and whether there is one.
func (r *Registry) Handler(kind string) (stage.Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.handlers[kind]
	return h, ok
}

// Kinds returns the registered kind names, sorted.
func (r *Registry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	kinds := make([]string, 0, len(r.handlers))
	for k := range r.handlers {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}
