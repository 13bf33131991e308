package stagekind

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// MaxConditionLength bounds the text of a condition.
const MaxConditionLength = 2048

// A condition is an expr-lang expression, true or false, over what a kind judges: an http
// response (status, headers, body), a metric query's result. Every condition of the project is
// compiled and run here, each language (conditionLang) naming its variables.

// condition is one compiled condition.
type condition struct {
	src  string
	prog *vm.Program
}

// conditionLang is what a family of conditions sees: env, a zero value of the struct their
// variables come from (its expr tags name them), with the compile options that go with it.
type conditionLang struct {
	name string // the cache's key prefix
	env  any
	over string // what the variables are, for errors: "status, headers and body"
	opts []expr.Option
}

// maxPrograms bounds the compiled conditions kept: past it, a condition not kept already is
// compiled at each use (plans keep arriving; their conditions must not grow memory without end).
const maxPrograms = 4096

// programs caches compiled conditions by language and text: a plan's condition is compiled
// once per executor, not per tenant and attempt. kept counts them.
var (
	programs sync.Map
	kept     atomic.Int64
)

// parse reads params[name], an optional condition of lang, and compiles it (nil when absent).
func (lang conditionLang) parse(params map[string]any, name string) (*condition, error) {
	raw, ok := params[name]
	if !ok || raw == nil || raw == "" {
		return nil, nil
	}
	src, ok := raw.(string)
	if !ok || len(src) > MaxConditionLength {
		return nil, paramError(name, fmt.Sprintf("must be an expression of at most %d characters over %s", MaxConditionLength, lang.over))
	}
	key := lang.name + "\x00" + src
	if p, ok := programs.Load(key); ok {
		return &condition{src: src, prog: p.(*vm.Program)}, nil
	}
	opts := append([]expr.Option{expr.Env(lang.env), expr.AsBool()}, lang.opts...)
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, paramError(name, "is not a condition: "+strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if kept.Add(1) <= maxPrograms {
		programs.Store(key, prog)
	}
	return &condition{src: src, prog: prog}, nil
}

// eval evaluates c over env, a value of its language's env type.
func (c *condition) eval(env any) (bool, error) {
	v, err := expr.Run(c.prog, env)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// holds evaluates c over env; an evaluation error (a field of a body that is not an object,
// say) is the condition not holding.
func (c *condition) holds(env any) bool {
	b, err := c.eval(env)
	return err == nil && b
}
