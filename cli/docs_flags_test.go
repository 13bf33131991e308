package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/cli"
)

// flagTables are the tables of docs/cli.md that list a command's flags with their variable
// and default (| flag | env | default | meaning |): the heading they follow → the command.
var flagTables = map[string][]string{
	"## Global flags":      nil,
	"### `executor serve`": {"serve"},
}

// checkFlagTables checks each row of the flag tables against the flag: the command has it, its
// help names the variable the docs give ("env X"), and its default is the docs' (`empty`,
// `none` and `off` for none; durations compared as durations; `<...>` is computed, not
// checked).
func checkFlagTables(t *testing.T, lines []string) {
	t.Helper()
	root := cli.CommandTree()
	for heading, path := range flagTables {
		cmd, _, err := root.Find(path)
		if !assert.NoError(t, err, heading) {
			continue
		}
		rows, at := tableAfter(t, lines, heading)
		for i, row := range rows {
			for _, name := range flagNames(row[0]) {
				checkFlagRow(t, cmd, name, row, where(at[i]))
			}
		}
	}
}

// flagNames returns the long flags a cell names (`--server URL`, `-o`, `--output F`).
func flagNames(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		if w := strings.Fields(m[1]); len(w) > 0 && strings.HasPrefix(w[0], "--") {
			out = append(out, w[0])
		}
	}
	return out
}

func checkFlagRow(t *testing.T, cmd *cobra.Command, name string, row []string, wh string) {
	t.Helper()
	f := lookupFlag(cmd.Flags(), name)
	if f == nil {
		f = lookupFlag(cmd.PersistentFlags(), name)
	}
	if !assert.NotNil(t, f, "%s: %q has no flag %s", wh, cmd.CommandPath(), name) || len(row) < 3 {
		return
	}
	if env := strings.Trim(row[1], "`"); strings.HasPrefix(env, "EXECUTOR_") {
		assert.Contains(t, f.Usage, "env "+env, "%s: the variable of %s, say the docs", wh, name)
	}
	doc := row[2]
	if m := codeSpan.FindStringSubmatch(doc); m != nil {
		doc = m[1]
	}
	assert.True(t, sameDefault(doc, f), "%s: the default of %s is %q, say the docs; the CLI's is %q", wh, name, doc, f.DefValue)
}

// sameDefault reports whether the docs' default is the flag's.
func sameDefault(doc string, f *pflag.Flag) bool {
	none := map[string]bool{"": true, "empty": true, "none": true, "off": true, "false": true, "[]": true}
	switch {
	case strings.HasPrefix(doc, "<"):
		return true
	case none[doc] || none[f.DefValue]:
		return none[doc] && none[f.DefValue]
	case f.Value.Type() == "duration":
		d, err := time.ParseDuration(doc)
		return err == nil && fmt.Sprint(d) == f.DefValue
	}
	return doc == f.DefValue
}
