package yamlerr_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/yamlerr"
)

const (
	singleQuotesHint = `a template in a double-quoted string cannot hold a double quote: quote the value with single quotes instead, as in '{{ index .Params "k" }}', or escape the inner quotes as \"`
	bareHint         = "a value that begins with a template must be quoted, as in '{{ .Params.host }}/x': YAML reads a bare { as the start of a mapping"
)

// The mistakes plans make, each on a line yaml.v3 does not name (it names where the list or
// mapping holding it began): the line of the mistake, and a hint for the common ones.
func TestCheckNamesTheLineOfTheMistake(t *testing.T) {
	t.Parallel()
	const head = "name: p\nstages:\n  - name: a\n    kind: http\n    params:\n"
	tests := []struct {
		name string
		doc  string
		want yamlerr.Error
	}{
		{"a list item indented too far", "name: p\nstages:\n  - name: a\n    kind: noop\n   - name: b\n    kind: noop\n",
			yamlerr.Error{Line: 5, Msg: "did not find expected '-' indicator"}},
		{"a list item indented too little", "name: p\nstages:\n  - name: a\n    kind: noop\n - name: b\n    kind: noop\ntenants:\n  - id: t\n",
			yamlerr.Error{Line: 5, Msg: "did not find expected key"}},
		{"a tab before a list item", "name: p\nstages:\n  - name: a\ntenants:\n\t- id: t1\n",
			yamlerr.Error{Line: 5, Msg: "found character that cannot start any token", Hint: "YAML indents with spaces, never tabs"}},
		{"a tab", "name: p\nstages:\n  - name: a\n\tkind: noop\n",
			yamlerr.Error{Line: 4, Msg: "found a tab character that violates indentation", Hint: "YAML indents with spaces, never tabs"}},
		{"an unclosed quote", head + "      url: \"http://x\n      method: GET\ntenants:\n  - id: t\n",
			yamlerr.Error{Line: 6, Msg: "found unexpected end of stream"}},
		{"a template with double quotes in a double-quoted string", head + "      url: \"{{ index .Params \"k\" }}\"\ntenants:\n  - id: t\n",
			yamlerr.Error{Line: 6, Msg: "did not find expected key", Hint: singleQuotesHint}},
		{"a template that begins a value, unquoted", head + "      url: {{ .Params.host }}/x\ntenants:\n  - id: t\n",
			yamlerr.Error{Line: 6, Msg: "did not find expected key", Hint: bareHint}},
		{"after a string on several lines", "name: p\ndesc: \"a\n  b\n  c\"\nstages:\n  - name: a\n    kind: noop\n - name: b\n",
			yamlerr.Error{Line: 8, Msg: "did not find expected key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := yamlerr.Check([]byte(tt.doc))
			var ye *yamlerr.Error
			require.ErrorAs(t, err, &ye)
			assert.Equal(t, tt.want, *ye)
		})
	}
}

func TestCheckAcceptsTemplatesQuotedRight(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"double quotes without a quote inside": "url: \"{{ .Params.host }}\"\n",
		"single quotes around double quotes":   "url: '{{ index .Params \"k\" }}'\n",
		"escaped double quotes":                "url: \"{{ index .Params \\\"k\\\" }}\"\n",
		"several documents":                    "a: 1\n---\nb: 2\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, yamlerr.Check([]byte(doc)))
		})
	}
}

func TestErrorReadsLineMessageAndHint(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "line 4: found a tab character that violates indentation (YAML indents with spaces, never tabs)",
		(&yamlerr.Error{Line: 4, Msg: "found a tab character that violates indentation", Hint: "YAML indents with spaces, never tabs"}).Error())
	assert.Equal(t, "control characters are not allowed", (&yamlerr.Error{Msg: "control characters are not allowed"}).Error())
}

// A document past MaxLocate keeps yaml.v3's own line: it is not parsed again and again.
func TestALargeDocumentKeepsYAMLsLine(t *testing.T) {
	t.Parallel()
	doc := "stages:\n  - name: a\n    kind: noop\n   - name: b\n" + strings.Repeat("# padding\n", yamlerr.MaxLocate/10)
	var ye *yamlerr.Error
	require.ErrorAs(t, yamlerr.Check([]byte(doc)), &ye)
	assert.Equal(t, 1, ye.Line, "yaml.v3 names the line where the list began")
}
