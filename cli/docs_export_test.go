package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// What docs_examples_test.go (package cli_test) needs from inside the package.

// CommandTree returns the command tree Main runs, with cobra's help and completion commands
// added as Main's execution adds them, for tests that walk it.
func CommandTree() *cobra.Command {
	root := (&invocation{}).newRoot()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// RunWith runs the command line as Main does, but with stdin and an environment of its own
// (env; nothing of the process's), so a test can feed `-f -` and set variables in parallel.
func RunWith(ctx context.Context, args []string, stdin io.Reader, env map[string]string, stdout, stderr io.Writer) int {
	return run(ctx, args, streams{stdin: stdin, stdout: stdout, stderr: stderr, getenv: func(k string) string { return env[k] }})
}

// PlanAtRest reports whether nothing of p can progress without an operator: what ends a
// --wait or --watch with ExitNeedsOperator.
func PlanAtRest(ctx context.Context, c *client.Client, p wire.Plan) (bool, error) {
	r, err := atRest(ctx, c, p)
	return r != nil, err
}
