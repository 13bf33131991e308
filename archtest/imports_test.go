package archtest_test

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	modulePath = "github.com/executor-dev/executor/"
	marker     = "<!-- imports: checked by archtest -->"
)

// moduleRoot returns the repository's root, the parent of this file's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "runtime.Caller")
	return filepath.Dir(filepath.Dir(file))
}

// rule is one documented line: the packages from matches may import those to does.
type rule struct {
	from string
	to   []string
	line int
}

// matches reports whether pkg (relative to the module) matches pattern: the package itself,
// or with "/*" any package under the prefix.
func matches(pattern, pkg string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(pkg, prefix+"/")
	}
	return pattern == pkg
}

// documentedRules reads the fenced block after the marker in docs/architecture.md: one line
// per package, "pkg → dep dep …" ("pkg →" alone: it imports nothing of the module).
func documentedRules(t *testing.T, root string) []rule {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	defer f.Close()
	var (
		rules         []rule
		seen, inBlock bool
		lineNo        int
		sc            = bufio.NewScanner(f)
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == marker:
			seen = true
		case seen && !inBlock && strings.HasPrefix(line, "```"):
			inBlock = true
		case inBlock && strings.HasPrefix(line, "```"):
			require.NotEmpty(t, rules, "the block after %q lists no rule", marker)
			return rules
		case inBlock && line != "":
			from, to, ok := strings.Cut(line, "→")
			require.True(t, ok, "docs/architecture.md:%d: %q has no →", lineNo, line)
			rules = append(rules, rule{from: strings.TrimSpace(from), to: strings.Fields(to), line: lineNo})
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("docs/architecture.md has no fenced block after %q", marker)
	return nil
}

// moduleImports returns, for every package of the module (relative path), the module packages
// its non-test files import. Nested modules (their own go.mod) and testdata are skipped.
func moduleImports(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(root, path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, modulePath); ok {
				out[pkg][dep] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// ruleFor returns the rule of pkg: its own line, else the line of a pattern matching it.
func ruleFor(rules []rule, pkg string) (rule, bool) {
	var wild *rule
	for i, r := range rules {
		if r.from == pkg {
			return r, true
		}
		if wild == nil && matches(r.from, pkg) {
			wild = &rules[i]
		}
	}
	if wild != nil {
		return *wild, true
	}
	return rule{}, false
}

// TestImportsMatchTheDocumentedRules fails for an import docs/architecture.md does not allow,
// for a package it does not list, and for a documented arrow no import draws (the picture
// must be the code's, not a wish).
func TestImportsMatchTheDocumentedRules(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	rules := documentedRules(t, root)
	imports := moduleImports(t, root)
	used := map[string]bool{} // "line:pattern" of every arrow some import draws
	pkgs := make([]string, 0, len(imports))
	for pkg := range imports {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		r, ok := ruleFor(rules, pkg)
		if !assert.True(t, ok, "package %s is not in docs/architecture.md's import rules", pkg) {
			continue
		}
		for dep := range imports[pkg] {
			allowed := false
			for _, to := range r.to {
				if matches(to, dep) {
					allowed, used[fmt.Sprint(r.line, ":", to)] = true, true
				}
			}
			assert.True(t, allowed, "%s imports %s, which docs/architecture.md:%d (%s → …) does not allow", pkg, dep, r.line, r.from)
		}
	}
	for _, r := range rules {
		for _, to := range r.to {
			assert.True(t, used[fmt.Sprint(r.line, ":", to)], "docs/architecture.md:%d: %s → %s, but no package there imports it", r.line, r.from, to)
		}
	}
}

// TestPatternMatching pins what the rules' patterns mean.
func TestPatternMatching(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pattern, pkg string
		want               bool
	}{
		{"exact", "app", "app", true},
		{"not a prefix of a name", "app", "app/apptest", false},
		{"a wildcard takes any package under it", "domain/*", "domain/task", true},
		{"deeper too", "infra/*", "infra/lock/locktest", true},
		{"not the prefix itself", "infra/*", "infra", false},
		{"not a sibling with the same start", "domain/*", "domainx/task", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, matches(tc.pattern, tc.pkg))
		})
	}
}
