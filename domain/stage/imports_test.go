package stage_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	modulePath   = "github.com/executor-dev/executor"
	domainImport = modulePath + "/domain"
)

// domainDir returns the absolute path of /domain, the parent of this file's directory.
func domainDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "runtime.Caller")
	dir := filepath.Dir(filepath.Dir(file))
	require.Equal(t, "domain", filepath.Base(dir))
	return dir
}

// stdlib reports whether path is a standard-library import: no dot in its first element.
func stdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// domainImportAllowed is the domain import rule (docs/design.md §2: the domain depends on nothing but the
// standard library, ULIDs and itself).
func domainImportAllowed(path string) bool {
	return stdlib(path) ||
		path == "github.com/oklog/ulid/v2" ||
		path == domainImport || strings.HasPrefix(path, domainImport+"/")
}

// badImports parses src (ImportsOnly) and returns the imports allowed refuses.
func badImports(t *testing.T, fset *token.FileSet, name string, src any, allowed func(string) bool) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
	require.NoError(t, err)
	var bad []string
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		if !allowed(path) {
			bad = append(bad, path)
		}
	}
	return bad
}

// domainSources lists every non-test .go file under dir.
func domainSources(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

func TestDomainImportRule(t *testing.T) {
	t.Parallel()
	dir := domainDir(t)
	files := domainSources(t, dir)
	require.NotEmpty(t, files)

	fset := token.NewFileSet()
	packages := map[string]bool{}
	for _, file := range files {
		rel, err := filepath.Rel(dir, file)
		require.NoError(t, err)
		packages[filepath.Dir(rel)] = true
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			allowed := domainImportAllowed
			if filepath.Dir(rel) == "stage" {
				allowed = stdlib // stage/doc.go: "The package imports only the standard library."
			}
			assert.Empty(t, badImports(t, fset, file, nil, allowed),
				"domain packages may import only the standard library, %s and %s/...",
				"github.com/oklog/ulid/v2", domainImport)
		})
	}
	for _, pkg := range []string{"checkpoint", "lease", "plan", "stage", "task"} {
		assert.True(t, packages[pkg], "the walk must reach domain/%s", pkg)
	}
}

func TestDomainImportRuleCatchesViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		imports string
		want    []string
	}{
		{"redis", `"github.com/redis/go-redis/v9"`, []string{"github.com/redis/go-redis/v9"}},
		{"infra of the same module", `"` + modulePath + `/infra/memrepo"`, []string{modulePath + "/infra/memrepo"}},
		{"a sibling that only shares the prefix", `"` + modulePath + `/domainx"`, []string{modulePath + "/domainx"}},
		{"ulid v1", `"github.com/oklog/ulid"`, []string{"github.com/oklog/ulid"}},
		{"golang.org/x is not the standard library", `"golang.org/x/sync/errgroup"`, []string{"golang.org/x/sync/errgroup"}},
		{"named and mixed", "\"fmt\"\n\tr \"github.com/redis/go-redis/v9\"\n\t\"github.com/oklog/ulid/v2\"\n\t\"" + domainImport + "/stage\"",
			[]string{"github.com/redis/go-redis/v9"}},
		{"allowed only", "\"context\"\n\t\"net/http\"\n\t\"github.com/oklog/ulid/v2\"\n\t\"" + domainImport + "/task\"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "package synthetic\n\nimport (\n\t" + tt.imports + "\n)\n"
			got := badImports(t, token.NewFileSet(), "synthetic.go", src, domainImportAllowed)
			assert.Equal(t, tt.want, got)
		})
	}
}
