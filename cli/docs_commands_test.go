package cli_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Checking a command line against the command tree without running it: docs_examples_test.go
// uses it for the lines it cannot run and to name what is wrong before it runs the others.

// pathWord is a word of a command's path, or alternatives of it (`approve|reject`).
var pathWord = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)

// commandOf returns the commands a command line's words (after `executor`) name: one, or one
// per alternative of a word such as `approve|reject`; or why they name none.
func commandOf(root *cobra.Command, words []string) ([]*cobra.Command, error) {
	i := skipGlobalFlags(root, words)
	var path []string
	for ; i < len(words) && pathWord.MatchString(words[i]); i++ {
		path = append(path, words[i])
	}
	var cmds []*cobra.Command
	for _, p := range alternatives(path) {
		cmd, rest, err := root.Find(p)
		switch {
		case err != nil:
			return nil, err
		case len(rest) > 0 && cmd.HasSubCommands():
			return nil, fmt.Errorf("%q has no command %q", cmd.CommandPath(), rest[0])
		}
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// skipGlobalFlags returns the index of the first word after the global flags (and their
// values) that come before the command.
func skipGlobalFlags(root *cobra.Command, words []string) int {
	i := 0
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		f := lookupFlag(root.PersistentFlags(), words[i])
		if f != nil && f.NoOptDefVal == "" && !strings.Contains(words[i], "=") {
			i++
		}
		i++
	}
	return i
}

// alternatives expands the words of a path that list alternatives: [plan bulk a|b] is
// [plan bulk a] and [plan bulk b].
func alternatives(path []string) [][]string {
	out := [][]string{nil}
	for _, w := range path {
		var next [][]string
		for _, prefix := range out {
			for _, alt := range strings.Split(w, "|") {
				next = append(next, append(append([]string(nil), prefix...), alt))
			}
		}
		out = next
	}
	return out
}

// flagWord is a word that is a flag (not `-`, not a negative number).
var flagWord = regexp.MustCompile(`^--?[A-Za-z]`)

// lookupFlag returns the flag a word names (--name, --name=v, -x) in fs, or nil.
func lookupFlag(fs *pflag.FlagSet, word string) *pflag.Flag {
	name, _, _ := strings.Cut(word, "=")
	if long, ok := strings.CutPrefix(name, "--"); ok {
		return fs.Lookup(long)
	}
	if len(name) == 2 {
		return fs.ShorthandLookup(name[1:])
	}
	return nil
}

// hasFlag reports whether cmd takes the flag word names, its own or inherited (--help and -h
// are cobra's, on every command).
func hasFlag(cmd *cobra.Command, word string) bool {
	if name, _, _ := strings.Cut(word, "="); name == "--help" || name == "-h" {
		return true
	}
	return lookupFlag(cmd.Flags(), word) != nil || lookupFlag(cmd.InheritedFlags(), word) != nil
}

// lineProblem says what is wrong with a command line's words (after `executor`): a command
// the tree does not have, or a flag that none of the commands it names takes. "" when
// nothing is.
func lineProblem(root *cobra.Command, words []string) string {
	cmds, err := commandOf(root, words)
	if err != nil {
		return err.Error()
	}
	for _, w := range words {
		if !flagWord.MatchString(w) {
			continue
		}
		found := false
		for _, cmd := range cmds {
			found = found || hasFlag(cmd, w)
		}
		if !found {
			return fmt.Sprintf("%q has no flag %s", cmds[0].CommandPath(), w)
		}
	}
	return ""
}
