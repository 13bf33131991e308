package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindExec is the kind name of Exec.
const KindExec = "exec"

// Output bounds of the exec kind.
const (
	// DefaultMaxExecOutputBytes caps what is kept of a command's stdout (its tail), where
	// the stage's output is read from, when ExecOptions leaves it zero: the http kind's cap.
	DefaultMaxExecOutputBytes = DefaultMaxResponseBytes
	// ExecTailBytes is how much of the end of stderr (and of stdout) a failure's message
	// carries, to show in the attempt ledger.
	ExecTailBytes = 1 << 10
	// pipeDrain is how long the reading of a command's pipes may stand still, once its
	// process group is killed, before it stops (a process that left the group may still hold
	// them); pipeDrainMax bounds the whole reading after the group ended.
	pipeDrain    = time.Second
	pipeDrainMax = 10 * time.Second
)

// ExecOptions configures the exec kind.
type ExecOptions struct {
	// Allow is the allow-list (serve --exec-allow, ParseExecAllow): nil or empty disables the
	// kind (every plan that names it is refused).
	Allow *ExecAllowList
	// Env names variables of the executor's own environment passed to every command besides
	// PATH and HOME (serve --exec-env). Nothing else of it is.
	Env []string
	// MaxOutputBytes caps what is kept of stdout; zero or negative: DefaultMaxExecOutputBytes.
	MaxOutputBytes int64
}

// Exec is the exec kind: it runs one command per attempt, without a shell (unless the
// allow-list names one). Params, already rendered, are
//
//	command             required, an absolute path the allow-list allows
//	args                optional array of strings
//	env                 optional object of variable name to string value
//	dir                 optional absolute working directory
//	stdin               optional string written to the command's stdin
//	permanentExitCodes  optional array of exit codes (1..255) that fail at once
//	killGrace           optional duration between SIGTERM and SIGKILL (default 10s)
//
// The command's environment is PATH, HOME and the variables ExecOptions.Env names, taken from
// the executor's, then EXECUTOR_TENANT_ID, EXECUTOR_PLAN_ID, EXECUTOR_TASK_ID,
// EXECUTOR_STAGE, EXECUTOR_ATTEMPT, EXECUTOR_IDEMPOTENCY_KEY and EXECUTOR_FENCE, then params.env.
// It runs in a process group of its own: when the attempt's context ends (the stage's
// timeout, an operator's cancel, a lost lease, a shutdown) the group gets SIGTERM, then
// SIGKILL after killGrace; once the command exits, whatever is left of its group is killed:
// no process outlives its attempt.
//
// Exit 0 succeeds: the last non-empty line of stdout, when it is a JSON object, is the output
// (else null); a line longer than MaxOutputBytes fails permanently. Any other exit is
// retryable under the stage's retry policy unless permanentExitCodes lists it; a command
// that cannot be started fails permanently. A failure's message ends with the tail of stderr
// (or of stdout, when stderr is empty). Whatever way it ended, the last stage.TranscriptMax
// bytes of its stdout and of its stderr are handed to req.KeepTranscript: the attempt ledger
// shows them.
type Exec struct {
	allow    *ExecAllowList
	env      []string
	maxBytes int64
}

var _ stage.ParamValidator = (*Exec)(nil)

// NewExec returns the exec kind configured by opts.
func NewExec(opts ExecOptions) *Exec {
	maxBytes := opts.MaxOutputBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxExecOutputBytes
	}
	return &Exec{allow: opts.Allow, env: append([]string{"PATH", "HOME"}, opts.Env...), maxBytes: maxBytes}
}

// ValidateParams checks the params as Run would, without running anything: a command the
// allow-list does not allow (or any, while the kind is disabled) is a *stage.FieldError
// naming "command" that matches ErrInvalidParams and ErrExecDenied.
func (e *Exec) ValidateParams(params map[string]any) error {
	_, err := parseExecParams(params, e.allow)
	return err
}

// Accepts reports whether this executor may run a stage of these params, as submitted
// (before templates render): the kind is enabled, and a command that is not a template is on
// its allow-list. Executors sharing a Redis may allow different commands: one that would
// refuse a plan's command leaves its tasks to the others.
func (e *Exec) Accepts(params map[string]any) bool {
	if e.allow.Empty() {
		return false
	}
	command, ok := params["command"].(string)
	if !ok || strings.Contains(command, "{{") {
		return true // known once rendered: checked then
	}
	_, err := e.allow.resolve(command)
	return err == nil
}

// Run runs the command req.Params describe and classifies how it ended.
func (e *Exec) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	p, err := parseExecParams(req.Params, e.allow)
	if err != nil {
		return nil, invalidParams(err)
	}
	res, err := e.start(p, req).wait(ctx, p.killGrace)
	if err != nil {
		return nil, stage.Permanent(fmt.Errorf("exec %s: %w", p.path, err))
	}
	req.KeepTranscript(res.transcript())
	if ctx.Err() != nil {
		return nil, fmt.Errorf("exec %s stopped (%s): %w", p.path, res.describe(), context.Cause(ctx))
	}
	if res.cut && res.code == 0 { // its output may be missing its end: never taken for the whole
		return nil, &stage.Error{Class: stage.ClassRetryable, Message: fmt.Sprintf(
			"exec %s: %s, but its stdout or stderr could not be read to the end (a process that left its group still held it %s after, or the executor read too slowly): its output is incomplete",
			p.path, res.describe(), pipeDrain)}
	}
	if res.code != 0 {
		msg := fmt.Sprintf("exec %s: %s%s", p.path, res.describe(), res.tail())
		if p.permanent[res.code] {
			return nil, &stage.Error{Class: stage.ClassPermanent, Message: msg}
		}
		return nil, &stage.Error{Class: stage.ClassRetryable, Message: msg}
	}
	return res.output(p.path)
}

// environ is the command's environment (see Exec).
func (e *Exec) environ(req stage.Request, p execParams) []string {
	env := make([]string, 0, len(e.env)+7+len(p.env))
	for _, name := range e.env {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env,
		"EXECUTOR_TENANT_ID="+req.TenantID, "EXECUTOR_PLAN_ID="+req.PlanID, "EXECUTOR_TASK_ID="+req.TaskID,
		"EXECUTOR_STAGE="+req.Stage, "EXECUTOR_ATTEMPT="+strconv.Itoa(req.Attempt),
		"EXECUTOR_IDEMPOTENCY_KEY="+req.IdempotencyKey(), "EXECUTOR_FENCE="+req.FenceToken())
	return append(env, p.env...)
}

// start prepares the command (it starts in run.wait).
func (e *Exec) start(p execParams, req stage.Request) *execRun {
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir = p.dir
	cmd.Env = e.environ(req, p)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if p.stdin != "" {
		cmd.Stdin = strings.NewReader(p.stdin)
	}
	cmd.WaitDelay = pipeDrain // stdin's copy, should the command leave it unread
	return &execRun{cmd: cmd, stdout: newTail(e.maxBytes), stderr: newTail(max(ExecTailBytes, stage.TranscriptMax))}
}

// exitDescription names how a process ended, for messages.
func exitDescription(state *os.ProcessState) string {
	if state == nil {
		return "did not run"
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exited " + strconv.Itoa(state.ExitCode())
}

// errExecOutput: the last line of stdout is longer than what is kept of it.
var errExecOutput = errors.New("stagekind: exec output line too long")
