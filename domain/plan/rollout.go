package plan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// Limits of a progressive rollout.
const (
	MaxWaves = 20             // rings in one plan
	MaxBake  = 24 * time.Hour // a ring's bake
)

// Order says how the tenants no wave pins are dealt into the waves.
type Order string

// Orders.
const (
	OrderSubmission Order = "submission" // in submission order (the default)
	OrderShuffle    Order = "shuffle"    // shuffled by the rollout's seed: the same plan, the same rings
)

// Share is a count of tenants or a percentage of them: a wave's size, or a ring's failure
// budget.
type Share struct {
	Count   int
	Percent float64 // in (0, 100]; 0: Count counts
}

// ParseShare reads "12" (a count) or "12.5%" (a percentage).
func ParseShare(v string) (Share, error) {
	v = strings.TrimSpace(v)
	if num, ok := strings.CutSuffix(v, "%"); ok {
		p, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(p) || p <= 0 || p > 100 {
			return Share{}, fmt.Errorf("%q is not a percentage in (0, 100]", v)
		}
		return Share{Percent: p}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return Share{}, fmt.Errorf("%q is neither a count (0 or more) nor a percentage (\"5%%\")", v)
	}
	return Share{Count: n}, nil
}

// String is the share as ParseShare reads it.
func (s Share) String() string {
	if s.Percent > 0 {
		return strconv.FormatFloat(s.Percent, 'f', -1, 64) + "%"
	}
	return strconv.Itoa(s.Count)
}

// Of is the share of n tenants: the count, or the percentage rounded up (a 1 % ring of 50
// tenants is 1 tenant, not 0).
func (s Share) Of(n int) int {
	if s.Percent > 0 {
		return int(math.Ceil(s.Percent*float64(n)/100 - 1e-9)) // 10 % of 200 is 20, not 21
	}
	return s.Count
}

// Exceeded reports whether failed of total tenants crosses the share as a failure budget: more
// failures than the count, or a failed share above the percentage.
func (s Share) Exceeded(failed, total int) bool {
	if s.Percent > 0 {
		return total > 0 && float64(failed)*100 > s.Percent*float64(total)
	}
	return failed > s.Count
}

// Tolerated is how many failures of total tenants the share tolerates as a failure budget: the
// most that do not cross it (Exceeded), so one more halts. 10 % of 10 tenants tolerates 1;
// 0 tolerates none.
func (s Share) Tolerated(total int) int {
	if s.Percent > 0 {
		return int(math.Floor(s.Percent*float64(total)/100 + 1e-9))
	}
	return s.Count
}

// Wave is one ring of a progressive rollout.
type Wave struct {
	Name string
	Size Share // ignored for the rest
	Rest bool  // the ring takes every tenant left (the last wave only)
	// MaxConcurrency bounds the plan's running tasks while this ring runs (0: the plan's).
	MaxConcurrency int
	// Bake is how long the ring waits after its tasks completed, before its health check and
	// the next ring.
	Bake time.Duration
	Then Then // after the ring (and its bake and check): auto, or approve
	// FailureBudget halts the plan when the ring's failed tenants cross it; nil: the
	// rollout's FailureBudget, and without one any failure halts.
	FailureBudget *Share
	// Health is an http check (a stage spec of kind http) made once after the bake: a failure
	// halts the plan. nil: none.
	Health *stage.Spec
	// Analysis are the ring's analyses (stage specs of AnalysisKind, each named), measured
	// throughout its bake: one failing past its limits halts the plan at once.
	Analysis []stage.Spec
}

// Rollout is a plan's progressive rollout: its tenants in rings, each started once the one
// before completed, baked and passed its check.
type Rollout struct {
	Waves []Wave
	Order Order
	Seed  uint64 // OrderShuffle's seed
	// FailureBudget is the ring failure budget of the waves that set none (nil: any failure
	// halts).
	FailureBudget *Share
	// Bounds places the rings in the plan's task ids, which are in ring order: ring k is
	// TaskIDs[Bounds[k]:Bounds[k+1]] (len(Waves)+1 entries). Deal computes them.
	Bounds []int
}

// Enabled reports whether the plan rolls out in rings.
func (r Rollout) Enabled() bool { return len(r.Waves) > 0 }

// Budget returns ring k's failure budget (the wave's, else the rollout's; a zero count when
// neither sets one: any failure halts).
func (r Rollout) Budget(k int) Share {
	switch {
	case r.Waves[k].FailureBudget != nil:
		return *r.Waves[k].FailureBudget
	case r.FailureBudget != nil:
		return *r.FailureBudget
	}
	return Share{}
}

// Check validates the rollout's settings (not its bounds) with a *stage.FieldError naming the
// field ("waves[2].bake"), matching ErrInvalid; nil without waves.
func (r Rollout) Check() error {
	return r.check(func(field, format string, args ...any) error {
		return &stage.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalid}
	})
}

func (r Rollout) check(bad func(field, format string, args ...any) error) error {
	if !r.Enabled() {
		switch {
		case r.FailureBudget != nil:
			return bad("failureBudget", "a share of each ring's tenants needs waves (a plan-wide budget is a number)")
		case r.Order != "" || r.Seed != 0:
			return bad("order", "an order or a seed needs waves")
		}
		return nil
	}
	if len(r.Waves) < 2 || len(r.Waves) > MaxWaves {
		return bad("waves", "must list between 2 and %d rings", MaxWaves)
	}
	if r.Order != OrderSubmission && r.Order != OrderShuffle {
		return bad("order", "must be %q or %q", OrderSubmission, OrderShuffle)
	}
	if err := checkBudget("failureBudget", r.FailureBudget, bad); err != nil {
		return err
	}
	names := make(map[string]int, len(r.Waves))
	for i, w := range r.Waves {
		f := fmt.Sprintf("waves[%d]", i)
		if w.Name == "" || len(w.Name) > 64 || strings.ContainsAny(w.Name, " \t\r\n") {
			return bad(f+".name", "must be 1 to 64 characters without spaces")
		}
		if j, dup := names[w.Name]; dup {
			return bad(f+".name", "duplicates waves[%d].name %q", j, w.Name)
		}
		names[w.Name] = i
		if err := w.check(f, i == len(r.Waves)-1, bad); err != nil {
			return err
		}
	}
	return nil
}

func (w Wave) check(f string, last bool, bad func(field, format string, args ...any) error) error {
	switch {
	case w.Rest && !last:
		return bad(f+".size", "only the last wave may be the rest")
	case !w.Rest && w.Size.Percent == 0 && w.Size.Count < 1:
		return bad(f+".size", "must be a count of 1 or more, a percentage (\"10%%\") or \"rest\"")
	case !w.Rest && (w.Size.Percent < 0 || w.Size.Percent > 100):
		return bad(f+".size", "a percentage must be in (0, 100]")
	case w.MaxConcurrency < 0 || w.MaxConcurrency > MaxMaxConcurrency:
		return bad(f+".maxConcurrency", "must be between 1 and %d (0: the plan's)", MaxMaxConcurrency)
	case w.Bake < 0 || w.Bake > MaxBake:
		return bad(f+".bake", "must be between 0 and %s", MaxBake)
	case w.Then != ThenAuto && w.Then != ThenApprove:
		return bad(f+".then", "must be %q or %q", ThenAuto, ThenApprove)
	case w.Health != nil && w.Health.Kind != "http":
		return bad(f+".health", "must be an http check")
	}
	if err := w.checkAnalysis(f, last, bad); err != nil {
		return err
	}
	return checkBudget(f+".failureBudget", w.FailureBudget, bad)
}

// checkAnalysis checks the wave's analyses: at most MaxAnalyses, of AnalysisKind, named
// uniquely, their policies valid, never on the last wave (which does not bake: the plan
// completes when its tasks do).
func (w Wave) checkAnalysis(f string, last bool, bad func(field, format string, args ...any) error) error {
	switch {
	case len(w.Analysis) == 0:
		return nil
	case last:
		return bad(f+".analysis", "the last ring does not bake (the plan completes when its tasks do): analyse the rings before it")
	case len(w.Analysis) > MaxAnalyses:
		return bad(f+".analysis", "must list at most %d analyses", MaxAnalyses)
	}
	names := make(map[string]int, len(w.Analysis))
	for j, a := range w.Analysis {
		af := fmt.Sprintf("%s.analysis[%d]", f, j)
		if !stage.NamePattern.MatchString(a.Name) {
			return bad(af+".name", "must match %s", stage.NamePattern)
		}
		if k, dup := names[a.Name]; dup {
			return bad(af+".name", "duplicates %s.analysis[%d].name %q", f, k, a.Name)
		}
		names[a.Name] = j
		if a.Kind != AnalysisKind {
			return bad(af+".kind", "must be %q", AnalysisKind)
		}
		if _, err := stage.ParseAnalysis(a.Params, true); err != nil {
			var fe *stage.FieldError
			if errors.As(err, &fe) {
				return bad(af+"."+fe.Field, "%s", fe.Reason)
			}
			return bad(af, "%v", err)
		}
	}
	return nil
}

func checkBudget(field string, b *Share, bad func(field, format string, args ...any) error) error {
	if b != nil && (b.Count < 0 || b.Percent < 0 || b.Percent > 100) {
		return bad(field, "must be a count (0 or more) or a percentage in (0, 100]")
	}
	return nil
}

// Wave returns the index of the wave named name.
func (r Rollout) Wave(name string) (int, bool) {
	for i, w := range r.Waves {
		if w.Name == name {
			return i, true
		}
	}
	return 0, false
}

// Deal deals n tenants into the rings. pins[i] is the wave tenant i (in submission order) is
// pinned to, or -1. Each ring takes its pinned tenants first, then the next unpinned ones (in
// submission order, or shuffled by Seed) up to its size; a ring of pinned tenants beyond its
// size is larger; the rest takes every tenant left. It returns order, the tenants' positions
// ring by ring (a permutation of 0..n-1), and Bounds. It fails (a *stage.FieldError on
// "waves") when tenants are left after the last wave and it is not the rest.
func (r Rollout) Deal(pins []int) (order []int, bounds []int, err error) {
	n := len(pins)
	pinned := make([][]int, len(r.Waves))
	var free []int
	for i, k := range pins {
		if k >= 0 {
			pinned[k] = append(pinned[k], i)
		} else {
			free = append(free, i)
		}
	}
	if r.Order == OrderShuffle {
		rng := rand.New(rand.NewPCG(r.Seed, r.Seed^0x9e3779b97f4a7c15))
		rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	}
	order = make([]int, 0, n)
	bounds = make([]int, 0, len(r.Waves)+1)
	for k, w := range r.Waves {
		bounds = append(bounds, len(order))
		order = append(order, pinned[k]...)
		take := len(free)
		if !w.Rest {
			take = min(len(free), max(0, w.Size.Of(n)-len(pinned[k])))
		}
		order = append(order, free[:take]...)
		free = free[take:]
	}
	bounds = append(bounds, len(order))
	if len(free) > 0 {
		return nil, nil, &stage.FieldError{Field: "waves", Err: ErrInvalid,
			Reason: fmt.Sprintf("the waves take %d of the %d tenants: make the last wave \"rest\"", n-len(free), n)}
	}
	return order, bounds, nil
}

// checkBounds checks that bounds place every one of n tasks in exactly one ring.
func (r Rollout) checkBounds(n int) error {
	if len(r.Bounds) != len(r.Waves)+1 || r.Bounds[0] != 0 || r.Bounds[len(r.Bounds)-1] != n {
		return fmt.Errorf("bounds %v do not split %d tasks into %d rings", r.Bounds, n, len(r.Waves))
	}
	for k := 1; k < len(r.Bounds); k++ {
		if r.Bounds[k] < r.Bounds[k-1] {
			return fmt.Errorf("bounds %v are not in order", r.Bounds)
		}
	}
	return nil
}
