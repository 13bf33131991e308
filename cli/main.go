// Package cli is the executor's command line (docs/design.md §7): `executor serve` runs an executor,
// every other command talks to one over its HTTP API through package client (the
// rollout-control commands, whose routes client has no methods for, through call in
// remote.go, with the same conventions).
//
// Main is the whole program: it parses args, runs one command and returns the exit status
// (ExitOK, ExitFailure, ExitUsage, ExitNeedsOperator, ExitTimeout, ExitInterrupted). It never calls os.Exit
// and keeps no global state, so tests run it in-process and in parallel.
package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/stagekind"
)

// Exit statuses of Main.
const (
	ExitOK      = 0 // the command succeeded
	ExitFailure = 1 // the command failed: a remote error, an unreachable server, a plan that did not complete under --wait
	ExitUsage   = 2 // the command line is wrong: unknown command or flag, missing flag or argument, bad flag value
	// ExitNeedsOperator: a plan waited on (--wait, --watch) cannot progress without an operator.
	ExitNeedsOperator = 3
	// ExitInterrupted: the wait of --wait or --watch was interrupted (Ctrl-C); the plan goes on.
	ExitInterrupted = 130
	// ExitTimeout: the --timeout of a --wait or --watch passed before the plan or task it
	// waited on ended or came to rest; it goes on (timeout(1)'s status).
	ExitTimeout = 124
)

// Environment variables read by the CLI. A flag given on the command line beats its variable.
const (
	EnvServer          = "EXECUTOR_SERVER"
	EnvToken           = "EXECUTOR_TOKEN"
	EnvAddr            = "EXECUTOR_ADDR"
	EnvName            = "EXECUTOR_NAME"
	EnvWorkers         = "EXECUTOR_WORKERS"
	EnvRedis           = "EXECUTOR_REDIS_URL"
	EnvRedisCluster    = "EXECUTOR_REDIS_CLUSTER"
	EnvPrefix          = "EXECUTOR_PREFIX"
	EnvLeaseTTL        = "EXECUTOR_LEASE_TTL"
	EnvNotifyBackoff   = "EXECUTOR_NOTIFY_BACKOFF"
	EnvRetention       = "EXECUTOR_RETENTION"
	EnvCacheTasks      = "EXECUTOR_CACHE_TASKS"
	EnvTopology        = "EXECUTOR_TOPOLOGY"
	EnvEventsStream    = "EXECUTOR_EVENTS_STREAM"
	EnvTokens          = "EXECUTOR_TOKENS" // serve: "role:name:secret,..." (the client's token is EnvToken)
	EnvTokensFile      = "EXECUTOR_TOKENS_FILE"
	EnvInsecure        = "EXECUTOR_INSECURE"
	EnvHTTPAllow       = "EXECUTOR_HTTP_ALLOW"
	EnvExecAllow       = "EXECUTOR_EXEC_ALLOW"
	EnvPrometheusAllow = "EXECUTOR_PROMETHEUS_ALLOW"
	EnvExecEnv         = "EXECUTOR_EXEC_ENV"
	EnvSecretsDir      = "EXECUTOR_SECRETS_DIR"
	EnvShutdownTimeout = "EXECUTOR_SHUTDOWN_TIMEOUT"
	EnvMaxTenants      = "EXECUTOR_MAX_TENANTS"
	EnvMaxStages       = "EXECUTOR_MAX_STAGES"
	EnvMaxParamsBytes  = "EXECUTOR_MAX_PARAMS_BYTES"
	EnvMaxQueued       = "EXECUTOR_MAX_QUEUED"
	EnvMaxBodyBytes    = "EXECUTOR_MAX_BODY_BYTES"
	// EnvMaxLabels and EnvMaxLabelValueBytes set serve's label bounds.
	EnvMaxLabels          = "EXECUTOR_MAX_LABELS"
	EnvMaxLabelValueBytes = "EXECUTOR_MAX_LABEL_VALUE_BYTES"
	// EnvMaxRenderSteps and EnvMaxRenderBytes set serve's bounds on rendering a submission.
	EnvMaxRenderSteps = "EXECUTOR_MAX_RENDER_STEPS"
	EnvMaxRenderBytes = "EXECUTOR_MAX_RENDER_BYTES"
	// EnvMaxOutputBytes and EnvMaxTaskOutputBytes set serve's stage output bounds.
	EnvMaxOutputBytes     = "EXECUTOR_MAX_OUTPUT_BYTES"
	EnvMaxTaskOutputBytes = "EXECUTOR_MAX_TASK_OUTPUT_BYTES"
	// EnvMaxEventStreams and EnvMaxEventStreamsPerClient set serve's event stream caps.
	EnvMaxEventStreams          = "EXECUTOR_MAX_EVENT_STREAMS"
	EnvMaxEventStreamsPerClient = "EXECUTOR_MAX_EVENT_STREAMS_PER_CLIENT"
	EnvLogLevel                 = "EXECUTOR_LOG_LEVEL"
)

// Defaults of the global and serve flags.
const (
	DefaultServer = "http://127.0.0.1:8080"
	DefaultAddr   = "127.0.0.1:8080"
)

// Main runs the executor command line with args (without the program name) and returns the
// exit status. Results go to stdout; errors go to stderr as one line
// "error: <status> <title>: <detail> (field: X)", or under -o json and -o yaml as one error
// document (failure.document). ctx ends long-running commands (serve,
// --wait, --watch); the caller makes it signal-aware. opts change what serve runs (WithKinds):
// a Go program that calls Main with them is `executor` with its own stage kinds, every flag,
// environment variable, guard, signal and log line of serve included.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	s := streams{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	for _, o := range opts {
		o(&s)
	}
	return run(ctx, args, s)
}

// Option changes what Main runs.
type Option func(*streams)

// WithKinds has serve register custom stage kinds with register, on
// the registry that holds the built-in ones, before the executor starts: the executor then
// advertises them, runs the tasks of plans that use them, and accepts such plans. An error
// of register (a duplicate or invalid kind name) stops serve with it.
func WithKinds(register func(*stagekind.Registry) error) Option {
	return func(s *streams) { s.kinds = append(s.kinds, register) }
}

// streams is what a run reads and writes besides its args.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	kinds          []func(*stagekind.Registry) error // WithKinds
}

// invocation is the state of one run of the CLI: the streams and the resolved global flags.
type invocation struct {
	streams
	server string
	token  string
	output string
}

// usageError is a wrong command line: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

func run(ctx context.Context, args []string, s streams) int {
	if s.getenv == nil {
		s.getenv = func(string) string { return "" }
	}
	if s.stdin == nil {
		s.stdin = strings.NewReader("")
	}
	a := &invocation{streams: s}
	root := a.newRoot()
	root.SetArgs(args)
	root.SetIn(s.stdin)
	root.SetOut(s.stdout)
	root.SetErr(s.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	f := a.failureOf(ctx, root, cmd, err)
	if f.exit == ExitUsage {
		// The flags may not have been parsed (a mistyped command or flag before -o): the
		// error still comes in the format the command line asked for.
		a.output = outputIn(args, a.output)
	}
	a.report(f)
	return f.exit
}

func (a *invocation) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "executor",
		Short: "Deployment-orchestration executor: roll out staged plans to many tenants",
		Long: `executor runs deployment plans: an ordered list of stages rolled out to many tenants,
one task per tenant, with a checkpoint after every completed stage.

'executor serve' runs an executor. Every other command talks to one over its HTTP API
(--server, $EXECUTOR_SERVER). Exit status: 0 ok, 1 failed or remote error, 2 usage error,
3 a plan or task waited on needs an operator, 124 a wait's --timeout passed, 130 a wait
interrupted.`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              groupArgs,
		RunE:              groupRun,
		PersistentPreRunE: a.resolveGlobals,
	}
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&a.server, "server", DefaultServer, "executor base URL (env "+EnvServer+")")
	pf.StringVar(&a.token, "token", "", "bearer token sent to the server (env "+EnvToken+")")
	pf.StringVarP(&a.output, "output", "o", OutputTable, "output format: table, json, yaml, name (ids, one a line) or wide (a table with more columns)")
	version := currentVersion()
	setVersionFlag(root, version)

	root.AddCommand(
		a.serveCmd(),
		a.submitCmd(),
		a.planCmd(),
		a.statusCmd(),
		a.checkpointCmd(),
		a.retryCmd(),
		a.rollbackCmd(),
		a.tenantOpCmd("pause", "Pause the tenant's latest task at its next stage boundary", (*client.Client).PauseTenant),
		a.tenantOpCmd("resume", "Resume the tenant's paused task", (*client.Client).ResumeTenant),
		a.tenantOpCmd("cancel", "Cancel the tenant's latest task", (*client.Client).CancelTenant),
		a.skipCmd(),
		a.decideCmd("approve", "Approve a tenant's WAITING task at its gate; the task continues",
			`Approve the gate (an approval stage) the tenant's latest task waits at (status WAITING): the
task runs on past it. --comment is kept with the task's decision. A task that is not WAITING
is a 409 (exit 1).`),
		a.decideCmd("reject", "Reject a tenant's WAITING task at its gate; the stage fails",
			`Reject the gate (an approval stage) the tenant's latest task waits at (status WAITING): the
stage fails permanently. --comment is kept with the task's decision (not in its error, not
logged). A task that is not WAITING is a 409 (exit 1).`),
		a.lockCmd(),
		a.unlockCmd(),
		a.taskCmd(),
		a.executorsCmd(),
		a.eventsCmd(),
		a.auditCmd(),
		a.benchCmd(),
		a.versionCmd(version),
	)
	a.registerCompletions(root)
	return root
}

// resolveGlobals applies environment variables to global flags not given on the command
// line and checks -o.
func (a *invocation) resolveGlobals(cmd *cobra.Command, _ []string) error {
	flags := cmd.Flags()
	if !flags.Changed("server") {
		if v := a.getenv(EnvServer); v != "" {
			a.server = v
		}
	}
	if !flags.Changed("token") {
		if v := a.getenv(EnvToken); v != "" {
			a.token = v
		}
	}
	if !validOutput(a.output) {
		return usagef("invalid value %q for -o/--output: want one of %s", a.output, strings.Join(outputFormats, ", "))
	}
	if a.output == OutputName && cmd.Annotations[annotationNoName] != "" {
		return usagef("-o name: %s prints no objects with an id: use -o json or -o yaml", cmd.CommandPath())
	}
	return nil
}

// client returns a client of --server.
func (a *invocation) client() (*client.Client, error) {
	u, err := url.Parse(a.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("invalid --server %q: want an http:// or https:// URL such as %s", a.server, DefaultServer)
	}
	c := client.New(a.server, a.token, nil)
	c.UserAgent = "executor-cli"
	return c, nil
}

// groupArgs accepts anything so that groupRun, not cobra, reports an unknown subcommand.
func groupArgs(*cobra.Command, []string) error { return nil }

// groupRun runs a command that only groups subcommands: any argument is an unknown
// subcommand, no argument is a missing one.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return usagef("%q needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
}

// exactArgs requires one positional argument per name.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return usagef("%s: missing argument %s", cmd.CommandPath(), names[len(args)])
		}
		if len(args) > len(names) {
			return usagef("%s: unexpected argument %q", cmd.CommandPath(), args[len(names)])
		}
		return nil
	}
}

// noArgs refuses positional arguments.
var noArgs = exactArgs()

// requireFlags fails with a usage error when a flag is missing or empty.
func requireFlags(names ...string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		for _, name := range names {
			f := cmd.Flags().Lookup(name)
			if f == nil || !cmd.Flags().Changed(name) || f.Value.String() == "" {
				return usagef("%s: required flag --%s is missing", cmd.CommandPath(), name)
			}
		}
		return nil
	}
}

// oneLine folds an error message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
