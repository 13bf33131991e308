package stagekind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// execRun is one attempt's command, from its start to the end of its process group.
type execRun struct {
	cmd            *exec.Cmd
	stdout, stderr *tail
}

// execResult is how an attempt's command ended.
type execResult struct {
	state          *os.ProcessState
	code           int // the exit code; -1 when a signal ended it
	stdout, stderr *tail
	cut            bool // stdout or stderr was not read to its end (drainPipes)
}

// wait starts the command and waits for it: until it exits, or, when ctx ends, after SIGTERM
// to its process group and, killGrace later, SIGKILL. Then whatever is left of the group is
// killed, and stdout and stderr are read to their end (see drainPipes). The error is the
// command's start's.
func (r *execRun) wait(ctx context.Context, killGrace time.Duration) (execResult, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return execResult{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return execResult{}, err
	}
	r.cmd.Stdout, r.cmd.Stderr = outW, errW // files: the command writes them itself
	err = r.startCmd()
	closeAll(outW, errW) // the command holds its own copies
	if err != nil {
		closeAll(outR, errR)
		return execResult{}, err
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(r.stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(r.stderr, errR) }()

	exited := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(exited) }()
	group := -r.cmd.Process.Pid
	select {
	case <-exited:
	case <-ctx.Done():
		_ = syscall.Kill(group, syscall.SIGTERM)
		grace := time.NewTimer(killGrace)
		select {
		case <-exited:
		case <-grace.C:
			_ = syscall.Kill(group, syscall.SIGKILL)
			<-exited
		}
		grace.Stop()
	}
	_ = syscall.Kill(group, syscall.SIGKILL) // what it left behind: no process outlives the attempt
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	cut := !drainPipes(drained, r.stdout, r.stderr)
	closeAll(outR, errR)
	<-drained
	state := r.cmd.ProcessState
	return execResult{state: state, code: state.ExitCode(), stdout: r.stdout, stderr: r.stderr, cut: cut}, nil
}

// drainPipes waits until drained, the readers of tails having reached the end of their pipes,
// as long as they keep reading (an executor starved of CPU reads late, not never): it gives
// up when they read nothing for pipeDrain (a process that left the group holds a pipe and
// writes nothing), or after pipeDrainMax. It reports whether they reached the end.
func drainPipes(drained <-chan struct{}, tails ...*tail) bool {
	limit := time.NewTimer(pipeDrainMax)
	defer limit.Stop()
	tick := time.NewTicker(pipeDrain)
	defer tick.Stop()
	read := func() (n int64) {
		for _, t := range tails {
			n += t.total()
		}
		return n
	}
	last := read()
	for {
		select {
		case <-drained:
			return true
		case <-limit.C:
			return false
		case <-tick.C:
			now := read()
			if now == last {
				select { // the end may have come with the tick
				case <-drained:
					return true
				default:
					return false
				}
			}
			last = now
		}
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// describe says how the command ended ("exited 3", "killed by terminated").
func (res execResult) describe() string { return exitDescription(res.state) }

// tail is what a failure's message ends with: the end of stderr, or of stdout when stderr is
// empty.
func (res execResult) tail() string {
	for _, t := range []struct {
		name string
		t    *tail
	}{{"stderr", res.stderr}, {"stdout", res.stdout}} {
		if b := bytes.TrimSpace(t.t.last(ExecTailBytes)); len(b) > 0 {
			return fmt.Sprintf("; %s: %s", t.name, b)
		}
	}
	return ""
}

// output is the stage's output: stdout's last non-empty line when it is a JSON object, else
// null. A last line longer than what was kept of stdout fails permanently.
func (res execResult) output(path string) (json.RawMessage, error) {
	kept, dropped := res.stdout.bytes()
	b := bytes.TrimRight(kept, " \t\r\n")
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 && dropped {
		return nil, stage.Permanent(fmt.Errorf("exec %s: %w: more than %d bytes", path, errExecOutput, res.stdout.limit))
	}
	line := bytes.TrimSpace(b[i+1:])
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return nil, nil
	}
	return json.RawMessage(bytes.Clone(line)), nil
}

// tail keeps the last limit bytes written to it. It holds up to twice that before it drops the
// front, so that each byte is copied a bounded number of times.
type tail struct {
	mu      sync.Mutex
	buf     []byte
	limit   int64
	dropped bool  // bytes were dropped from the front
	written int64 // every byte it was given
}

func newTail(limit int64) *tail { return &tail{limit: limit} }

// Write keeps the end of what it has been given.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.written += int64(n)
	if int64(len(p)) >= t.limit {
		t.buf = append(t.buf[:0], p[int64(len(p))-t.limit:]...)
		t.dropped = true
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if int64(len(t.buf)) > 2*t.limit {
		t.buf = append(t.buf[:0], t.buf[int64(len(t.buf))-t.limit:]...)
		t.dropped = true
	}
	return n, nil
}

// total returns how many bytes t was given.
func (t *tail) total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// bytes returns the last limit bytes, and whether anything was dropped before them.
func (t *tail) bytes() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := max(0, int64(len(t.buf))-t.limit)
	return bytes.Clone(t.buf[from:]), t.dropped || from > 0
}

// last returns at most the last n bytes kept.
func (t *tail) last(n int) []byte {
	b, _ := t.bytes()
	return b[max(0, len(b)-n):]
}

// startCmd starts the command, again when the kernel answers ETXTBSY: the file was written a
// moment ago and a process forked meanwhile (by this executor, or the tool that wrote it)
// still holds a copy of its descriptor until it execs (golang/go#22315). A command that has
// failed to start cannot start again: a fresh one, the same, is made each time.
func (r *execRun) startCmd() error {
	for try := 1; ; try++ {
		err := r.cmd.Start()
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || try == textBusyTries {
			return err
		}
		time.Sleep(time.Duration(try) * 5 * time.Millisecond)
		c := r.cmd
		r.cmd = &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Stdin: c.Stdin, Stdout: c.Stdout,
			Stderr: c.Stderr, SysProcAttr: c.SysProcAttr, WaitDelay: c.WaitDelay}
	}
}

// textBusyTries is how many times a command whose file is busy is started.
const textBusyTries = 10
