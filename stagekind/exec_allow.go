package stagekind

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrExecDenied is matched (errors.Is) by the error of a command the exec allow-list does not
// allow, and of every command while the exec kind is disabled (no allow-list).
var ErrExecDenied = errors.New("stagekind: command not allowed")

// ParseExecAllow checks the entries of serve's --exec-allow: each an absolute path, a
// directory written with a trailing "/". An empty list disables the exec kind.
func ParseExecAllow(entries []string) (*ExecAllowList, error) {
	a := &ExecAllowList{files: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !filepath.IsAbs(e) {
			return nil, fmt.Errorf("stagekind: exec allow-list entry %q: must be an absolute path (a directory with a trailing /)", e)
		}
		if strings.HasSuffix(e, "/") {
			a.dirs = append(a.dirs, strings.TrimSuffix(filepath.Clean(e), "/")+"/")
		} else {
			a.files[filepath.Clean(e)] = true
		}
	}
	return a, nil
}

// ExecAllowList is the exec kind's allow-list (serve --exec-allow, ParseExecAllow): absolute
// paths of files (those files only) and of directories (every command under them).
type ExecAllowList struct {
	files map[string]bool
	dirs  []string // each ending in "/"
}

// Empty reports whether the list allows nothing (the exec kind is disabled).
func (a *ExecAllowList) Empty() bool {
	return a == nil || (len(a.files) == 0 && len(a.dirs) == 0)
}

// resolve returns the command's path if the list allows it: an absolute path, cleaned, that
// is one of the files or under one of the directories the list names. Nothing is looked up
// in PATH: a plan names what runs.
func (a *ExecAllowList) resolve(command string) (string, error) {
	if a.Empty() {
		return "", fmt.Errorf("%w: the exec kind is disabled on this executor (serve --exec-allow names no command)", ErrExecDenied)
	}
	if !filepath.IsAbs(command) {
		return "", fmt.Errorf("%w: %q must be an absolute path", ErrExecDenied, command)
	}
	path := filepath.Clean(command)
	if a.files[path] {
		return path, nil
	}
	for _, d := range a.dirs {
		if strings.HasPrefix(path, d) {
			return path, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not in serve --exec-allow", ErrExecDenied, path)
}
