package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestDistance is how many single-character edits (insertion, deletion, substitution) a
// mistyped command or flag name may be from the one suggested: "sumbit" is 2 from "submit".
const suggestDistance = 2

// flagError is the usage error of a command line whose flags do not parse. On a command that
// only groups others, a word before the bad flag is a mistyped command: 'executor sumbit -f
// x.yaml' is reported as the unknown command "sumbit" (with its suggestion), not as the flag
// -f that the root does not have. An unknown long flag gets the nearest of the command's
// flags as a suggestion: --tenat, "did you mean --tenant?".
func flagError(cmd *cobra.Command, err error) error {
	if args := cmd.Flags().Args(); len(args) > 0 && cmd.HasAvailableSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		if s := suggestFlag(cmd.Flags(), ne.GetSpecifiedName()); s != "" {
			return usagef("%s (did you mean --%s?)", err, s)
		}
	}
	return &usageError{err: err}
}

// unknownCommand is the usage error of name, which is not a command of group, with cobra's
// suggestions (the group's commands at most suggestDistance edits away, or that name
// begins).
func unknownCommand(group *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, group.CommandPath())
	group.SuggestionsMinimumDistance = suggestDistance
	if s := group.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return &usageError{err: errors.New(msg)}
}

// suggestFlag is the name of the visible flag of fs nearest to name, at most suggestDistance
// edits away (the first in fs's order on a tie), or one that begins with name; "" when there
// is none.
func suggestFlag(fs *pflag.FlagSet, name string) string {
	best, bestDist := "", suggestDistance+1
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(f.Name))
		if d > suggestDistance && strings.HasPrefix(f.Name, name) && len(name) >= 2 {
			d = suggestDistance
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
