package errcode_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/errcode"
)

// TestAllListsEveryCode fails when a code is declared in errcode.go without being in All.
func TestAllListsEveryCode(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "errcode.go", nil, 0)
	require.NoError(t, err)
	var declared []errcode.Code
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
				s, err := strconv.Unquote(v.Values[0].(*ast.BasicLit).Value)
				require.NoError(t, err)
				declared = append(declared, errcode.Code(s))
			}
		}
	}
	require.NotEmpty(t, declared)
	assert.Equal(t, declared, errcode.All)
}

// typed is a typed error with a code and a detail of its own, wrapping a coded sentinel.
type typed struct{}

func (typed) Error() string      { return "typed: refused" }
func (typed) Code() errcode.Code { return errcode.InvalidTransition }
func (typed) Detail() string     { return "refused" }
func (typed) Unwrap() error      { return sentinel }

var (
	sentinel = errcode.WithDetail(errcode.InvalidTransition, "x: invalid transition", "not allowed now")
	plain    = errcode.New(errcode.Unavailable, "x: away")
)

func TestFindAndDetail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		code       errcode.Code
		found      bool
		wantDetail string
	}{
		{name: "a sentinel's own detail, whatever wraps it", err: fmt.Errorf("ctx: %w", sentinel), code: errcode.InvalidTransition, found: true, wantDetail: "not allowed now"},
		{name: "no detail: the whole error", err: fmt.Errorf("ctx: %w", plain), code: errcode.Unavailable, found: true, wantDetail: "ctx: x: away"},
		{name: "the outer typed error first", err: fmt.Errorf("ctx: %w", typed{}), code: errcode.InvalidTransition, found: true, wantDetail: "refused"},
		{name: "in a joined error", err: errors.Join(errors.New("other"), fmt.Errorf("w: %w", plain)), code: errcode.Unavailable, found: true, wantDetail: "other\nw: x: away"},
		{name: "another code", err: plain, code: errcode.NotFound},
		{name: "no code at all", err: errors.New("plain"), code: errcode.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			found, ok := errcode.Find(tc.err, tc.code)
			require.Equal(t, tc.found, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.code, found.Code())
			assert.Equal(t, tc.wantDetail, errcode.Detail(tc.err, found))
		})
	}
	require.ErrorIs(t, fmt.Errorf("w: %w", sentinel), sentinel, "a coded sentinel is an ordinary sentinel")
	assert.Equal(t, "x: invalid transition", sentinel.Error())
}

// Coded gives an error of a package that cannot import errcode its code and what a caller is
// told, whatever wraps it, errors.Is still seeing the error itself.
func TestCoded(t *testing.T) {
	t.Parallel()
	inner := errors.New("stage: already approved")
	err := fmt.Errorf("orchestrator: approve: %w", errcode.Coded(errcode.InvalidTransition, inner, "you approved already"))
	require.ErrorIs(t, err, inner)
	found, ok := errcode.Find(err, errcode.InvalidTransition)
	require.True(t, ok)
	assert.Equal(t, "you approved already", errcode.Detail(err, found))
	assert.Nil(t, errcode.Coded(errcode.Forbidden, nil, "x"))
	plain := errcode.Coded(errcode.Forbidden, inner, "")
	found, ok = errcode.Find(plain, errcode.Forbidden)
	require.True(t, ok)
	assert.Equal(t, inner.Error(), errcode.Detail(plain, found))
}
