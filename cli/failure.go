package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// Kinds of failure an error document names (its "code") when no executor's problem does.
const (
	kindUsage       = "usage"          // a wrong command line (exit 2)
	kindUnreachable = "unreachable"    // no executor answered at --server
	kindInterrupted = "interrupted"    // Ctrl-C or SIGTERM
	kindOperator    = "needs-operator" // a wait ended with the plan or task at rest (exit 3)
	kindTimeout     = "timeout"        // a wait's --timeout passed (ExitTimeout)
	kindEnded       = "ended"          // a plan or task waited on ended other than COMPLETED
	kindLost        = "lost-executor"  // the executor went away during a wait
	kindFailed      = "failed"         // any other failure
)

// problemTypePrefix is what the problem types of the executor's answers begin with
// (wire.ProblemNotFound, ...): the rest is an error document's code.
const problemTypePrefix = "urn:executor:problem:"

// failure is how a failed run ends: its exit status, its error line (after "error: ") and the
// lines under it.
type failure struct {
	exit   int
	line   string   // on one line
	suffix string   // appended to the line (the unreachable hint); a hint of its own in a document
	hints  []string // one indented line each
	usage  string   // a usage error's last line: Run '<command> --help' for usage.
	kind   string   // the document's code when err carries no problem
	err    error
}

// failureOf is the failure err makes of the run of cmd (nil when cobra found none).
func (a *invocation) failureOf(ctx context.Context, root, cmd *cobra.Command, err error) failure {
	var ue *usageError
	if errors.As(err, &ue) {
		path := root.CommandPath()
		if cmd != nil {
			path = cmd.CommandPath()
		}
		return failure{exit: ExitUsage, line: oneLine(err.Error()), usage: fmt.Sprintf("Run '%s --help' for usage.", path), kind: kindUsage, err: err}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return failure{exit: ee.code, line: oneLine(ee.msg), hints: ee.hints, kind: failureKind(ee), err: err}
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return failure{exit: ExitFailure, line: "interrupted", kind: kindInterrupted, err: err}
	}
	f := failure{exit: ExitFailure, line: oneLine(err.Error()), suffix: a.unreachableHint(err), kind: kindFailed, err: err}
	if f.suffix != "" {
		f.kind = kindUnreachable
	}
	return f
}

// failureKind is the kind of an exitError: its own, else its exit status's.
func failureKind(e *exitError) string {
	switch {
	case e.kind != "":
		return e.kind
	case e.code == ExitNeedsOperator:
		return kindOperator
	case e.code == ExitInterrupted:
		return kindInterrupted
	case e.code == ExitTimeout:
		return kindTimeout
	}
	return kindFailed
}

// print writes the failure as text: the error line, the hints indented, the usage line.
func (f failure) print(w io.Writer) {
	fmt.Fprintf(w, "error: %s%s\n", f.line, f.suffix)
	for _, h := range f.hints {
		fmt.Fprintf(w, "  %s\n", oneLine(h))
	}
	if f.usage != "" {
		fmt.Fprintln(w, f.usage)
	}
}

// errorDoc is the error document -o json and -o yaml write to stderr instead of the error
// line: {"error": {...}}.
type errorDoc struct {
	Error errorBody `json:"error"`
}

// errorBody is a failure as data. Status, Title, Detail, Field, Fields and Tenants are the
// executor's problem when it answered with one; Code is the problem's type without its
// prefix (not-found, invalid-transition, ...) or the CLI's kind of failure (usage,
// unreachable, timeout, needs-operator, ...); Message is the text of the error line.
type errorBody struct {
	Status  int                 `json:"status,omitempty"`
	Title   string              `json:"title,omitempty"`
	Detail  string              `json:"detail,omitempty"`
	Code    string              `json:"code"`
	Field   string              `json:"field,omitempty"`
	Fields  []wire.FieldProblem `json:"fields,omitempty"`
	Tenants []string            `json:"tenants,omitempty"`
	Message string              `json:"message"`
	Exit    int                 `json:"exit"`
	Hints   []string            `json:"hints,omitempty"`
}

// document is the failure as an error document.
func (f failure) document() errorDoc {
	b := errorBody{Code: f.kind, Message: f.line, Exit: f.exit, Hints: f.hints}
	if h := strings.TrimPrefix(f.suffix, "; "); h != "" {
		b.Hints = append(b.Hints, h)
	}
	if f.usage != "" {
		b.Hints = append(b.Hints, f.usage)
	}
	var ce *client.Error
	if errors.As(f.err, &ce) {
		p := ce.Problem
		b.Status, b.Title, b.Detail, b.Field, b.Fields, b.Tenants = ce.Status, p.Title, p.Detail, p.Field, p.Errors, p.Tenants
		if code, ok := strings.CutPrefix(p.Type, problemTypePrefix); ok && f.kind != kindLost {
			b.Code = code
		}
	}
	return errorDoc{Error: b}
}

// report writes the failure to stderr: an error document under -o json (one line) or -o yaml,
// the error line otherwise.
func (a *invocation) report(f failure) {
	switch a.output {
	case OutputJSON:
		enc := json.NewEncoder(a.stderr)
		enc.SetEscapeHTML(false)
		if enc.Encode(f.document()) == nil {
			return
		}
	case OutputYAML:
		if writeYAML(a.stderr, f.document()) == nil {
			return
		}
	}
	f.print(a.stderr)
}

// outputIn is the -o/--output value args name (the last one, as the flag parser would take
// it), or def when they name none or an unknown format: for reporting a usage error in the
// format asked for when the parser stopped before the flag.
func outputIn(args []string, def string) string {
	out := def
	for i, arg := range args {
		if arg == "--" {
			break
		}
		var v string
		switch {
		case (arg == "-o" || arg == "--output") && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(arg, "--output="):
			v = strings.TrimPrefix(arg, "--output=")
		case strings.HasPrefix(arg, "-o") && len(arg) > 2:
			v = strings.TrimPrefix(strings.TrimPrefix(arg, "-o"), "=")
		default:
			continue
		}
		if validOutput(v) {
			out = v
		}
	}
	return out
}
