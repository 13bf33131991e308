package stagekind

import (
	"errors"
	"fmt"
	"math"

	"github.com/expr-lang/expr"

	"github.com/executor-dev/executor/domain/stage"
)

// Vector is a query's result as a prometheus condition sees it, `result`: the values of its
// samples (a scalar result is one), in the order of their labels. It is a list (result[0],
// len(result), all(result, # < 0.01), any(result, # >= 0.05)); compared or computed with as a
// number (result < 0.01, result * 100), it is its one value, and a result of several samples
// used so cannot be evaluated: the measurement is inconclusive and says to compare one sample
// or all of them.
type Vector []float64

// promEnv is what a prometheus condition sees.
type promEnv struct {
	Result Vector `expr:"result"`
}

// errSeveralSamples: a result of several samples was used as a number.
var errSeveralSamples = errors.New("the result has several samples: compare one (result[0]) or all of them (all(result, # < 0.01), any(result, # >= 0.05))")

// promConditions are the prometheus kind's conditions (successCondition, failureCondition).
var promConditions = conditionLang{name: "prometheus", env: promEnv{}, over: "result", opts: vectorOperators()}

// vectorOperators overloads the comparison and arithmetic operators for a Vector on either
// side (with a float, an int or another Vector): each works on the Vector's one value.
func vectorOperators() []expr.Option {
	var opts []expr.Option
	overload := func(op, name string, out any, f func(a, b float64) any) {
		fn := func(args ...any) (any, error) {
			a, err := scalar(args[0])
			if err != nil {
				return nil, err
			}
			b, err := scalar(args[1])
			if err != nil {
				return nil, err
			}
			return f(a, b), nil
		}
		var sigs []any
		switch out.(type) {
		case bool:
			sigs = []any{new(func(Vector, float64) bool), new(func(float64, Vector) bool), new(func(Vector, int) bool),
				new(func(int, Vector) bool), new(func(Vector, Vector) bool)}
		default:
			sigs = []any{new(func(Vector, float64) float64), new(func(float64, Vector) float64), new(func(Vector, int) float64),
				new(func(int, Vector) float64), new(func(Vector, Vector) float64)}
		}
		opts = append(opts, expr.Function(name, fn, sigs...), expr.Operator(op, name))
	}
	for op, f := range map[string]func(a, b float64) bool{
		"<": func(a, b float64) bool { return a < b }, "<=": func(a, b float64) bool { return a <= b },
		">": func(a, b float64) bool { return a > b }, ">=": func(a, b float64) bool { return a >= b },
		"==": func(a, b float64) bool { return a == b }, "!=": func(a, b float64) bool { return a != b },
	} {
		overload(op, "vector"+opName(op), true, func(a, b float64) any { return f(a, b) })
	}
	for op, f := range map[string]func(a, b float64) float64{
		"+": func(a, b float64) float64 { return a + b }, "-": func(a, b float64) float64 { return a - b },
		"*": func(a, b float64) float64 { return a * b }, "/": func(a, b float64) float64 { return a / b },
	} {
		overload(op, "vector"+opName(op), 0.0, func(a, b float64) any { return f(a, b) })
	}
	return opts
}

// opName names an operator for its overload's function name.
func opName(op string) string {
	return map[string]string{"<": "Lt", "<=": "Le", ">": "Gt", ">=": "Ge", "==": "Eq", "!=": "Ne",
		"+": "Add", "-": "Sub", "*": "Mul", "/": "Div"}[op]
}

// scalar is an operand as a number: a Vector's one value.
func scalar(v any) (float64, error) {
	switch v := v.(type) {
	case Vector:
		if len(v) != 1 {
			return 0, errSeveralSamples
		}
		return v[0], nil
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	}
	return 0, fmt.Errorf("cannot use %T as a number", v)
}

// promJudge decides one measurement's verdict from the result's values (NaN dropped: no
// traffic is no data), and says why.
type promJudge struct {
	success, failure *condition
	onEmpty          stage.OnEmpty
}

func (j promJudge) verdict(values Vector) (stage.Verdict, string) {
	kept := values[:0:0]
	for _, v := range values {
		if !math.IsNaN(v) {
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		return j.onEmpty.Verdict(), "the query returned no sample (onEmpty: " + string(j.onEmpty) + ")"
	}
	env := promEnv{Result: kept}
	if j.failure != nil {
		held, err := j.failure.eval(env)
		switch {
		case err != nil:
			return stage.VerdictInconclusive, fmt.Sprintf("failureCondition `%s` could not be evaluated: %v", j.failure.src, firstLine(err))
		case held:
			return stage.VerdictFailed, fmt.Sprintf("failureCondition `%s` held", j.failure.src)
		}
	}
	if j.success == nil {
		return stage.VerdictSuccessful, fmt.Sprintf("failureCondition `%s` did not hold", j.failure.src)
	}
	held, err := j.success.eval(env)
	switch {
	case err != nil:
		return stage.VerdictInconclusive, fmt.Sprintf("successCondition `%s` could not be evaluated: %v", j.success.src, firstLine(err))
	case held:
		return stage.VerdictSuccessful, fmt.Sprintf("successCondition `%s` held", j.success.src)
	case j.failure != nil:
		return stage.VerdictInconclusive, fmt.Sprintf("neither successCondition `%s` nor failureCondition `%s` held", j.success.src, j.failure.src)
	}
	return stage.VerdictFailed, fmt.Sprintf("successCondition `%s` did not hold", j.success.src)
}

// firstLine is an error's first line (expr's errors point at the column on the next lines).
func firstLine(err error) string {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
