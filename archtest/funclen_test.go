package archtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxFuncLines is the longest a function may be outside tests, from its signature to its
// closing brace: longer ones are split into functions that each do one thing.
const maxFuncLines = 80

// TestNoFunctionOverMaxLines fails for a function (or method) of a non-test file longer than
// maxFuncLines, whatever its build tags.
func TestNoFunctionOverMaxLines(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
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
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			lines := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1
			rel, _ := filepath.Rel(root, path)
			assert.LessOrEqual(t, lines, maxFuncLines, "%s: %s is %d lines", rel, fn.Name.Name, lines)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 100, "the walk found the module's functions")
}

// skipDir reports whether the walk skips the directory at path (named name): testdata,
// hidden and underscored directories, and nested modules (their own go.mod).
func skipDir(root, path, name string) bool {
	if path == root {
		return false
	}
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}
