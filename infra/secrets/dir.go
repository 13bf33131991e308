package secrets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxSize bounds a secret's file, in bytes.
const MaxSize = 64 << 10

// NamePattern is what a secret's name must match: a file name, never a path.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ErrNotFound is matched (errors.Is) by the error of a secret the directory does not hold.
var ErrNotFound = errors.New("secrets: no such secret")

// Dir is a directory of secrets, one file each.
type Dir struct{ path string }

// Open checks that path is a directory and returns it.
func Open(path string) (*Dir, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("secrets: %s is not a directory", path)
	}
	return &Dir{path: path}, nil
}

// Secret returns the value of secret name: its file's content, one trailing newline removed.
// A name that is not a file name (NamePattern), or a file over MaxSize, is refused; a missing
// one matches ErrNotFound.
func (d *Dir) Secret(name string) (string, error) {
	if !NamePattern.MatchString(name) {
		return "", fmt.Errorf("secrets: %q is not a secret name (%s)", name, NamePattern)
	}
	f, err := os.Open(filepath.Join(d.path, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %q in %s", ErrNotFound, name, d.path)
	}
	if err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return "", fmt.Errorf("secrets: read %q: %w", name, err)
	}
	if len(b) > MaxSize {
		return "", fmt.Errorf("secrets: %q is larger than %d bytes", name, MaxSize)
	}
	v := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(v, "\r"), nil
}
