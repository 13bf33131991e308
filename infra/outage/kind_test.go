package outage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// The degraded log line names what made Redis unavailable.
func TestKindNamesTheOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Args("--maxmemory", "1", "--maxmemory-policy", "noeviction"))
	oom := srv.Client().Set(ctx, "k", "v", 0).Err()
	require.True(t, Is(oom), "precondition: a real OOM reply")
	acl := redistest.Start(t)
	require.NoError(t, acl.Client().Do(ctx, "ACL", "SETUSER", "u", "on", ">pw", "~k*", "+@all", "-eval").Err())
	user := redis.NewClient(&redis.Options{Addr: acl.Addr(), Username: "u", Password: "pw"})
	t.Cleanup(func() { _ = user.Close() })
	noPerm := user.Eval(ctx, "return 1", nil).Err()
	inScript := user.Eval(ctx, "return redis.call('GET', 'other')", nil).Err()
	wrongPass := redis.NewClient(&redis.Options{Addr: acl.Addr(), Username: "u", Password: "wrong"})
	t.Cleanup(func() { _ = wrongPass.Close() })
	wrong := wrongPass.Ping(ctx).Err()
	unknown := acl.Client().Do(ctx, "NOSUCHCOMMAND").Err()
	for _, err := range []error{noPerm, inScript, wrong, unknown} {
		require.True(t, Denied(err), "precondition: a real refusal: %v", err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a closed connection", fmt.Errorf("redisrepo: save task: %w", io.EOF), "unreachable"},
		{"data lost", fmt.Errorf("redisrepo: plan x: %w", ErrDataLost), "data lost"},
		{"out of memory", fmt.Errorf("redisrepo: save task: %w", oom), "OOM"},
		{"a command the ACL user may not run", fmt.Errorf("redisrepo: save task: %w", noPerm), "NOPERM"},
		{"a key the ACL user may not use, in a script", inScript, "NOPERM"},
		{"a wrong password", wrong, "WRONGPASS"},
		{"an unknown command", unknown, "unknown command"},
		{"an untrusted certificate", fmt.Errorf("dial: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), "TLS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, kind(tc.err))
		})
	}
}
