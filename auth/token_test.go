package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
)

const (
	readSecret    = "r-0123456789abcdef"
	operateSecret = "o-0123456789abcdef"
)

func TestParseToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want auth.Token
		err  bool
	}{
		{name: "read", in: "read:" + readSecret, want: auth.Token{Role: auth.RoleRead, Secret: readSecret}},
		{name: "operate with spaces", in: "  operate : " + operateSecret + " ", want: auth.Token{Role: auth.RoleOperate, Secret: operateSecret}},
		{name: "no role", in: readSecret, err: true},
		{name: "unknown role", in: "admin:" + readSecret, err: true},
		{name: "too short", in: "read:short", err: true},
		{name: "control character", in: "read:" + readSecret + "\x01", err: true},
		{name: "inner space", in: "read:0123456789 abcdef", err: true},
		{name: "named", in: "operate:alice:" + operateSecret, want: auth.Token{Role: auth.RoleOperate, Name: "alice", Secret: operateSecret}},
		{name: "named, spaces", in: " read : ci-bot@example : " + readSecret, want: auth.Token{Role: auth.RoleRead, Name: "ci-bot@example", Secret: readSecret}},
		{name: "a secret with a colon needs a name", in: "operate:bob:" + operateSecret + ":x", want: auth.Token{Role: auth.RoleOperate, Name: "bob", Secret: operateSecret + ":x"}},
		{name: "bad name", in: "operate:al ice:" + operateSecret, err: true},
		{name: "empty name", in: "operate::" + operateSecret, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := auth.ParseToken(tc.in)
			if tc.err {
				require.ErrorIs(t, err, auth.ErrInvalidToken)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseListAndFile(t *testing.T) {
	t.Parallel()
	list, err := auth.ParseList("read:" + readSecret + ", operate:" + operateSecret + ",")
	require.NoError(t, err)
	require.Len(t, list, 2)

	file, err := auth.ReadFile(strings.NewReader("# SRE tokens\n\nread:" + readSecret + "\noperate:" + operateSecret + "\n"))
	require.NoError(t, err)
	assert.Equal(t, list, file)

	_, err = auth.ParseList("read:" + readSecret + ",operate:short")
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	_, err = auth.ReadFile(strings.NewReader("read:" + readSecret + "\nbogus\n"))
	require.ErrorIs(t, err, auth.ErrInvalidToken)
}

func TestKeysMatch(t *testing.T) {
	t.Parallel()
	keys := auth.NewKeys([]auth.Token{{Role: auth.RoleRead, Secret: readSecret}, {Role: auth.RoleOperate, Name: "alice", Secret: operateSecret}})
	require.True(t, keys.Enabled())
	who, ok := keys.Match(operateSecret)
	require.True(t, ok)
	assert.Equal(t, auth.Holder{Role: auth.RoleOperate, Name: "alice"}, who)
	assert.Equal(t, "alice", who.Actor())
	who, ok = keys.Match(readSecret)
	require.True(t, ok)
	assert.Equal(t, auth.Holder{Role: auth.RoleRead}, who)
	assert.Equal(t, "anonymous", who.Actor(), "a token written without a name")
	for _, bad := range []string{"", readSecret[:len(readSecret)-1], readSecret + "x", strings.ToUpper(operateSecret)} {
		_, ok := keys.Match(bad)
		assert.False(t, ok, "%q", bad)
	}
	assert.False(t, auth.NewKeys(nil).Enabled())
	var none *auth.Keys
	_, ok = none.Match(readSecret)
	assert.False(t, ok)
}

func TestRoleAllows(t *testing.T) {
	t.Parallel()
	assert.True(t, auth.RoleOperate.Allows(auth.RoleRead))
	assert.True(t, auth.RoleOperate.Allows(auth.RoleOperate))
	assert.True(t, auth.RoleRead.Allows(auth.RoleRead))
	assert.False(t, auth.RoleRead.Allows(auth.RoleOperate))
	assert.False(t, auth.Role("").Allows(auth.RoleRead))
}

func TestTokenNeverPrintsItsSecret(t *testing.T) {
	t.Parallel()
	tok := auth.Token{Role: auth.RoleOperate, Secret: operateSecret}
	assert.NotContains(t, tok.String(), operateSecret)
	assert.NotContains(t, tok.LogValue().String(), operateSecret)
	assert.Equal(t, "operate:"+tok.Fingerprint(), tok.String())
	tok.Name = "alice"
	assert.Equal(t, "operate:alice:"+tok.Fingerprint(), tok.String())
}

func TestHolderInContext(t *testing.T) {
	t.Parallel()
	_, ok := auth.RoleFrom(context.Background())
	assert.False(t, ok, "no role in a bare context")
	ctx := auth.WithHolder(context.Background(), auth.Holder{Role: auth.RoleRead, Name: "bob"})
	role, ok := auth.RoleFrom(ctx)
	require.True(t, ok)
	assert.Equal(t, auth.RoleRead, role)
	who, ok := auth.HolderFrom(ctx)
	require.True(t, ok)
	assert.Equal(t, "bob", who.Name)
}

// Two tokens with one secret are refused (the first would win silently), naming both by
// position; a token may not be named anonymous, which the tokens without a name act as.
func TestTokensAreDistinctAndNotAnonymous(t *testing.T) {
	t.Parallel()
	a, err := auth.ParseToken("read:bob:0123456789abcdef")
	require.NoError(t, err)
	b, err := auth.ParseToken("operate:alice:0123456789abcdef")
	require.NoError(t, err)
	c, err := auth.ParseToken("operate:carol:fedcba9876543210")
	require.NoError(t, err)
	require.NoError(t, auth.Distinct([]auth.Token{a, c}))
	err = auth.Distinct([]auth.Token{a, c, b})
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	assert.Contains(t, err.Error(), "tokens 1 and 3")
	assert.NotContains(t, err.Error(), "0123456789abcdef")
	_, err = auth.ParseToken("operate:anonymous:0123456789abcdef")
	require.ErrorIs(t, err, auth.ErrInvalidToken)
}
