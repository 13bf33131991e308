package stagekind

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// Bounds of the exec kind's params.
const (
	// DefaultKillGrace is how long a command's process group has, after SIGTERM, before
	// SIGKILL, when params.killGrace is not set.
	DefaultKillGrace = 10 * time.Second
	// MaxKillGrace bounds params.killGrace.
	MaxKillGrace = 5 * time.Minute
	// MaxExecArgs bounds params.args; MaxExecEnv bounds params.env.
	MaxExecArgs = 1000
	MaxExecEnv  = 200
	// MaxExecStdin bounds params.stdin, in bytes.
	MaxExecStdin = 1 << 20
)

// envName is what a name of params.env must match; names beginning with EXECUTOR_ are the
// executor's own.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// execParams are an exec stage's params, checked.
type execParams struct {
	path      string // the command, an absolute path the allow-list names
	args      []string
	env       []string // NAME=value, from params.env, in name order
	dir       string
	stdin     string
	permanent map[int]bool // exit codes that fail at once
	killGrace time.Duration
}

// parseExecParams checks params against allow (nil: the kind is disabled).
func parseExecParams(params map[string]any, allow *ExecAllowList) (execParams, error) {
	if err := checkKnownParams(params, "command", "args", "env", "dir", "stdin", "permanentExitCodes", "killGrace"); err != nil {
		return execParams{}, err
	}
	p := execParams{killGrace: DefaultKillGrace}
	command, ok := params["command"].(string)
	if !ok || command == "" {
		return p, paramError("command", "is required: the absolute path of a command serve --exec-allow allows")
	}
	path, err := allow.resolve(command)
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), "stagekind: ")
		return p, &stage.FieldError{Field: "command", Reason: reason, Err: errors.Join(ErrInvalidParams, err)}
	}
	p.path = path
	if p.args, err = stringList(params, "args", MaxExecArgs); err != nil {
		return p, err
	}
	if p.env, err = envList(params["env"]); err != nil {
		return p, err
	}
	if raw, ok := params["dir"]; ok {
		dir, ok := raw.(string)
		if !ok || !filepath.IsAbs(dir) {
			return p, paramError("dir", "must be an absolute directory path")
		}
		p.dir = filepath.Clean(dir)
	}
	if raw, ok := params["stdin"]; ok {
		s, ok := raw.(string)
		if !ok || len(s) > MaxExecStdin {
			return p, paramError("stdin", fmt.Sprintf("must be a string of at most %d bytes", MaxExecStdin))
		}
		p.stdin = s
	}
	if p.permanent, err = exitCodes(params["permanentExitCodes"]); err != nil {
		return p, err
	}
	if raw, ok := params["killGrace"]; ok {
		s, _ := raw.(string)
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > MaxKillGrace {
			return p, paramError("killGrace", fmt.Sprintf(`must be a duration such as "10s", at most %s`, MaxKillGrace))
		}
		p.killGrace = d
	}
	return p, nil
}

// stringList reads params[name], an optional array of strings.
func stringList(params map[string]any, name string, most int) ([]string, error) {
	raw, ok := params[name]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, paramError(name, "must be an array of strings")
	}
	if len(list) > most {
		return nil, paramError(name, fmt.Sprintf("has %d items, at most %d", len(list), most))
	}
	out := make([]string, len(list))
	for i, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, paramError(fmt.Sprintf("%s[%d]", name, i), fmt.Sprintf("must be a string, not %T", v))
		}
		out[i] = s
	}
	return out, nil
}

// envList reads params.env, an optional object of variable name to string value.
func envList(raw any) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, paramError("env", "must be an object of variable name to string value")
	}
	if len(m) > MaxExecEnv {
		return nil, paramError("env", fmt.Sprintf("has %d variables, at most %d", len(m), MaxExecEnv))
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]string, 0, len(m))
	for _, name := range names {
		if !envName.MatchString(name) || strings.HasPrefix(name, "EXECUTOR_") {
			return nil, paramError("env."+name, "must be a variable name ([A-Za-z_][A-Za-z0-9_]*), not one beginning with EXECUTOR_ (the executor sets those)")
		}
		v, ok := m[name].(string)
		if !ok || strings.ContainsRune(v, 0) {
			return nil, paramError("env."+name, "must be a string without NUL")
		}
		out = append(out, name+"="+v)
	}
	return out, nil
}

// exitCodes reads params.permanentExitCodes, an optional array of exit codes 1..255.
func exitCodes(raw any) (map[int]bool, error) {
	if raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, paramError("permanentExitCodes", "must be an array of exit codes (1..255)")
	}
	out := make(map[int]bool, len(list))
	for i, v := range list {
		code, ok := wholeNumber(v)
		if !ok || code < 1 || code > 255 {
			return nil, paramError(fmt.Sprintf("permanentExitCodes[%d]", i), fmt.Sprintf("must be an exit code from 1 to 255, not %v", v))
		}
		out[code] = true
	}
	return out, nil
}

// wholeNumber reads an integer decoded from JSON (float64, json.Number) or YAML (int).
func wholeNumber(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	default:
		return 0, false
	}
}
