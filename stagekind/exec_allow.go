package stagekind

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
// is one of the files or under one of the directories the list names; or a bare name (no
// "/"), looked up in the list alone, never in PATH: the first of the directories, in the
// order given, that holds an executable file of that name, else the one file of the list
// with that name. A plan names a script by name and each executor finds it where it is
// installed (the examples' scripts, the repository's directory on each machine).
func (a *ExecAllowList) resolve(command string) (string, error) {
	if a.Empty() {
		return "", fmt.Errorf("%w: the exec kind is disabled on this executor (serve --exec-allow names no command)", ErrExecDenied)
	}
	if command != "" && !strings.Contains(command, "/") && command != "." && command != ".." {
		return a.lookup(command)
	}
	if !filepath.IsAbs(command) {
		return "", fmt.Errorf("%w: %q must be an absolute path, or the name of a command in an --exec-allow directory", ErrExecDenied, command)
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

// lookup finds a bare command name in the list (see resolve).
func (a *ExecAllowList) lookup(name string) (string, error) {
	for _, d := range a.dirs {
		path := d + name
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	for _, f := range slices.Sorted(maps.Keys(a.files)) {
		if filepath.Base(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: no executable %q in the --exec-allow directories or files", ErrExecDenied, name)
}
