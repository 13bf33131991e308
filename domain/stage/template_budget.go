package stage

import (
	"errors"
	"fmt"
	"reflect"
	"text/template/parse"
)

// Bounds of a template's work, so that no param can exhaust an executor's memory or CPU
// (`{{range 100000000}}x{{end}}`, ranges of ranges): past either, the template fails with
// ErrTemplate naming the param, at submission (every tenant's templates are rendered there)
// or when the stage runs.
const (
	// MaxRenderedBytes bounds what one param's template writes.
	MaxRenderedBytes = 256 << 10
	// MaxRangeSteps bounds the iterations of every {{range}} of one stage's params for one
	// tenant (rendered together), all ranges, nested or not, counted together.
	MaxRangeSteps = 100_000
)

// fnRange is the function the renderer appends to every {{range}}'s pipeline: it counts the
// iterations about to run against MaxRangeSteps.
const fnRange = "_executor_range"

// errBudget is what a template over a bound fails with (wrapped in a *budgetError).
var errBudget = errors.New("over the template budget")

// budgetError says which bound a template went past.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }
func (e *budgetError) Unwrap() error { return errBudget }

// rangeGuard is fnRange: `{{range X}}` runs as `{{range X | _executor_range $}}`. root is the
// template's $ (the *execData being rendered, which keeps the count of one RenderAll: params
// call no template, so $ is always it); v is passed on unchanged when its iterations fit.
func rangeGuard(root any, v any) (any, error) {
	n, err := iterations(v)
	if err != nil {
		return nil, err
	}
	d, ok := root.(*execData)
	if !ok {
		return nil, fmt.Errorf("{{range}} outside of a param's template (%T)", root)
	}
	if d.steps += n; d.steps > MaxRangeSteps {
		return nil, &budgetError{msg: fmt.Sprintf("{{range}} would iterate more than %d times in this stage's params", MaxRangeSteps)}
	}
	if r := d.r; r != nil && r.maxSteps > 0 && r.steps.Add(int64(n)) > r.maxSteps {
		return nil, &budgetError{msg: fmt.Sprintf("{{range}} would iterate more than %d times over every tenant's params", r.maxSteps)}
	}
	return v, nil
}

// iterations is how many times {{range}} runs over v.
func iterations(v any) (int, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Invalid:
		return 0, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(max(rv.Int(), 0)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(min(rv.Uint(), uint64(MaxRangeSteps)+1)), nil
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return rv.Len(), nil
	}
	return 0, &budgetError{msg: fmt.Sprintf("{{range}} over a %T is not allowed in params", v)}
}

// guardRanges appends fnRange to every {{range}} pipeline under n.
func guardRanges(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			guardRanges(c)
		}
	case *parse.RangeNode:
		root := &parse.VariableNode{NodeType: parse.NodeVariable, Pos: n.Pos, Ident: []string{"$"}}
		ident := parse.NewIdentifier(fnRange).SetTree(nil).SetPos(n.Pos)
		n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pos, Args: []parse.Node{ident, root}})
		guardRanges(n.List)
		guardRanges(n.ElseList)
	case *parse.IfNode:
		guardRanges(n.List)
		guardRanges(n.ElseList)
	case *parse.WithNode:
		guardRanges(n.List)
		guardRanges(n.ElseList)
	}
}

// cappedWriter is a template's output, refusing to grow past MaxRenderedBytes.
type cappedWriter struct{ b []byte }

func (w *cappedWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > MaxRenderedBytes {
		return 0, &budgetError{msg: fmt.Sprintf("the template writes more than %d bytes", MaxRenderedBytes)}
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
