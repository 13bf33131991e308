// Package yamlerr explains a YAML syntax error the way a person fixing the file needs it: the
// line where the mistake is, and a hint for the mistakes plans make most.
//
// gopkg.in/yaml.v3 names the line where the construct holding the mistake began (a list item
// mis-indented on line 5 of a list that begins on line 2 reads "line 2"). Explain finds the
// first line at which the document, cut there, fails with the same message: the line the
// mistake is on, or yaml.v3's own line when the cut finds no better one. It imports only
// yaml.v3 and the standard library.
package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxLocate bounds the documents whose line Explain looks for (it parses the document about
// log2(lines) times): past it, yaml.v3's own line is kept.
const MaxLocate = 1 << 20

// Error is a YAML syntax error: where and what, and how to fix it when the mistake is a
// common one.
type Error struct {
	Line int    // 1-based; 0 when unknown
	Msg  string // yaml.v3's message, without its "yaml: line N: " prefix
	Hint string // how to fix it; "" when the mistake is not a known one
}

// Error reads "line 5: did not find expected '-' indicator", then the hint, if any.
func (e *Error) Error() string {
	s := e.Msg
	if e.Line > 0 {
		s = fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Check parses every document of doc and returns nil, or the first syntax error explained
// (an *Error).
func Check(doc []byte) error {
	if err := parse(doc); err != nil {
		return Explain(doc, err)
	}
	return nil
}

// Explain explains err, yaml.v3's error for doc: the line of the mistake (see the package
// doc) and a hint. An error that is not a syntax error keeps its text, without a line.
func Explain(doc []byte, err error) *Error {
	line, msg := split(err)
	lines := bytes.SplitAfter(doc, []byte("\n"))
	if line > 0 && line <= len(lines) && len(doc) <= MaxLocate {
		line = locate(lines, line, msg)
	}
	e := &Error{Line: line, Msg: msg}
	if line > 0 && line <= len(lines) {
		e.Hint = hint(string(lines[line-1]), msg)
	}
	return e
}

var located = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// split reads yaml.v3's "yaml: line N: message" into N and the message (0 and the text, less
// its "yaml: ", when it names no line).
func split(err error) (int, string) {
	s := err.Error()
	if m := located.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(s, "yaml: ")
}

// locate returns the first line k at or after from such that doc's first k lines fail to
// parse with msg (the whole document does): where the mistake is.
func locate(lines [][]byte, from int, msg string) int {
	fails := func(k int) bool {
		err := parse(bytes.Join(lines[:k], nil))
		if err == nil {
			return false
		}
		_, m := split(err)
		return m == msg
	}
	lo, hi := from, len(lines)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// parse decodes every document of doc into nodes, aliases unexpanded.
func parse(doc []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// templateInDoubleQuotes is a double-quoted value whose template holds a double quote:
// "{{ index .Params "k" }}" ends the string at the second quote.
var templateInDoubleQuotes = regexp.MustCompile(`"[^"]*\{\{[^}"]*"`)

// bareTemplate is a value that begins with a template, unquoted: YAML reads its "{" as the
// start of a mapping.
var bareTemplate = regexp.MustCompile(`^\s*(-\s+)?[^\s"'#][^:#]*:\s+\{\{`)

// hint is how to fix the mistake on line, yaml.v3 saying msg; "" when it is not a known one.
func hint(line, msg string) string {
	switch {
	case templateInDoubleQuotes.MatchString(line):
		return `a template in a double-quoted string cannot hold a double quote: quote the value with single quotes instead, as in '{{ index .Params "k" }}', or escape the inner quotes as \"`
	case bareTemplate.MatchString(line):
		return "a value that begins with a template must be quoted, as in '{{ .Params.host }}/x': YAML reads a bare { as the start of a mapping"
	case strings.Contains(msg, "tab character"), strings.HasPrefix(strings.TrimLeft(line, " "), "\t"):
		return "YAML indents with spaces, never tabs"
	}
	return ""
}
