package stagekind

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// withHost returns rawURL with its host name replaced by host (the port kept).
func withHost(t *testing.T, rawURL, host string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	u.Host = net.JoinHostPort(host, u.Port())
	return u.String()
}

// requireDenied checks that err is a permanent failure matching ErrDestinationDenied.
func requireDenied(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, ErrDestinationDenied)
	assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
}

// countingServer starts a server on addr ("127.0.0.1:0" when empty) that counts its requests
// and answers with handler.
func countingServer(t *testing.T, addr string, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "listen on %s (on Linux all of 127.0.0.0/8 is loopback)", addr)
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestHTTPAllowList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		allow  []string
		host   string // replaces 127.0.0.1 in the URL when set
		denied bool
	}{
		{name: "empty list reaches loopback"},
		{name: "listed ip", allow: []string{"127.0.0.1"}},
		{name: "listed cidr", allow: []string{"127.0.0.0/8"}},
		{name: "listed hostname", allow: []string{"localhost"}, host: "localhost"},
		{name: "listed hostname, any case", allow: []string{"LocalHost"}, host: "localhost"},
		{name: "other cidr", allow: []string{"10.0.0.0/8"}, denied: true},
		{name: "other cidr, by hostname", allow: []string{"10.0.0.0/8"}, host: "localhost", denied: true},
		{name: "hostname entry, ip url", allow: []string{"localhost"}, denied: true},
		{name: "other hostname", allow: []string{"deploy.internal"}, host: "localhost", denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, hits := countingServer(t, "", respondWith(http.StatusOK, `{"ok":true}`))
			target := srv.URL
			if tt.host != "" {
				target = withHost(t, target, tt.host)
			}
			h := NewHTTP(HTTPOptions{Allow: tt.allow})

			out, err := h.Run(context.Background(), testRequest(map[string]any{"url": target}))
			if tt.denied {
				requireDenied(t, err)
				assert.Zero(t, hits.Load(), "a denied destination gets no request")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, `{"ok":true}`, string(out))
			assert.Equal(t, int32(1), hits.Load())
		})
	}
}

func TestHTTPRedirectToDeniedDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		allow  []string
		denied bool
	}{
		{name: "allowed redirect is followed", allow: []string{"127.0.0.0/8"}},
		{name: "redirect outside the list", allow: []string{"127.0.0.1/32"}, denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			second, secondHits := countingServer(t, "127.0.0.2:0", respondWith(http.StatusOK, `{"second":true}`))
			first, firstHits := countingServer(t, "", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, second.URL+"/landing", http.StatusFound)
			})
			h := NewHTTP(HTTPOptions{Allow: tt.allow})

			out, err := h.Run(context.Background(), testRequest(map[string]any{"url": first.URL}))
			assert.Equal(t, int32(1), firstHits.Load())
			if tt.denied {
				requireDenied(t, err)
				assert.Zero(t, secondHits.Load(), "the redirect target gets no request")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, `{"second":true}`, string(out))
			assert.Equal(t, int32(1), secondHits.Load())
		})
	}
}

func TestHTTPMetadataDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string
	}{
		{name: "aws, gcp, azure", url: "http://169.254.169.254/latest/meta-data/"},
		{name: "ipv4-mapped ipv6", url: "http://[::ffff:169.254.169.254]/latest/meta-data/"},
		{name: "aws ipv6", url: "http://[fd00:ec2::254]/latest/meta-data/"},
		{name: "alibaba", url: "http://100.100.100.200/latest/meta-data/"},
		{name: "oracle", url: "http://192.0.0.192/opc/v2/instance/"},
		{name: "unspecified", url: "http://0.0.0.0:80/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := NewHTTP(HTTPOptions{})

			_, err := h.Run(context.Background(), testRequest(map[string]any{"url": tt.url}))
			requireDenied(t, err)
			var opErr *net.OpError
			assert.False(t, errors.As(err, &opErr), "denied from the URL alone, before any socket: %v", err)

			err = h.ValidateParams(map[string]any{"url": tt.url})
			requireParamError(t, err, "url")
			require.ErrorIs(t, err, ErrDestinationDenied)
		})
	}
}

func TestHTTPListedMetadataIsNotDenied(t *testing.T) {
	t.Parallel()
	// Listed, the address is dialled: nothing answers there in a test, so the attempt fails
	// (timeout or unreachable), but not as denied.
	h := NewHTTP(HTTPOptions{
		Client: &http.Client{Timeout: 200 * time.Millisecond},
		Allow:  []string{"169.254.169.254/32"},
	})
	params := map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}
	require.NoError(t, h.ValidateParams(params))

	_, err := h.Run(context.Background(), testRequest(params))
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrDestinationDenied)
}

func TestHTTPDialTimeCheckSeesResolvedAddress(t *testing.T) {
	t.Parallel()
	// A listed hostname that resolves (or rebinds) to a metadata or unlisted address is
	// denied when the socket is about to connect.
	tests := []struct {
		name    string
		allow   []string
		host    string
		address string
		denied  bool
	}{
		{name: "listed name resolving to metadata", allow: []string{"metadata.google.internal"},
			host: "metadata.google.internal", address: "169.254.169.254:80", denied: true},
		{name: "listed name resolving to mapped metadata", allow: []string{"deploy.internal"},
			host: "deploy.internal", address: "[::ffff:169.254.169.254]:80", denied: true},
		{name: "any name resolving to link-local, empty list", host: "rebind.example", address: "[fe80::1%lo]:80", denied: true},
		{name: "unlisted name resolving inside no cidr", allow: []string{"10.0.0.0/8"},
			host: "rebind.example", address: "127.0.0.1:80", denied: true},
		{name: "unlisted name resolving inside a cidr", allow: []string{"10.0.0.0/8"},
			host: "rebind.example", address: "10.1.1.1:80"},
		{name: "listed name resolving anywhere", allow: []string{"deploy.internal"},
			host: "deploy.internal", address: "192.0.2.7:443"},
		{name: "no host in the context", allow: []string{"deploy.internal"}, address: "192.0.2.7:443", denied: true},
		{name: "unreadable address", address: "somewhere", denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newGuard(mustAllow(t, tt.allow...))
			ctx := context.Background()
			if tt.host != "" {
				ctx = context.WithValue(ctx, dialHostKey{}, tt.host)
			}
			err := g.control(ctx, "tcp", tt.address, nil)
			if tt.denied {
				require.ErrorIs(t, err, ErrDestinationDenied)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestHTTPGuardOwnsTheTransport(t *testing.T) {
	t.Parallel()
	t.Run("a proxy of the caller's transport is not used", func(t *testing.T) {
		t.Parallel()
		srv, hits := countingServer(t, "", respondWith(http.StatusOK, ""))
		proxy, proxyHits := countingServer(t, "", respondWith(http.StatusOK, ""))
		proxyURL, err := url.Parse(proxy.URL)
		require.NoError(t, err)
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
		h := NewHTTP(HTTPOptions{Client: client})

		_, err = h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
		require.NoError(t, err)
		assert.Equal(t, int32(1), hits.Load())
		assert.Zero(t, proxyHits.Load())
	})
	t.Run("a dial function of the caller's transport does not bypass the guard", func(t *testing.T) {
		t.Parallel()
		srv, hits := countingServer(t, "", respondWith(http.StatusOK, ""))
		transport := &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
			},
		}
		h := NewHTTP(HTTPOptions{Client: &http.Client{Transport: transport}, Allow: []string{"10.0.0.0/8"}})

		_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
		requireDenied(t, err)
		assert.Zero(t, hits.Load())
	})
	t.Run("a transport that is not an *http.Transport fails closed", func(t *testing.T) {
		t.Parallel()
		var called atomic.Bool
		rt := roundTripFunc(func(*http.Request) (*http.Response, error) {
			called.Store(true)
			return nil, errors.New("called")
		})
		client := &http.Client{Transport: rt}
		h := NewHTTP(HTTPOptions{Client: client})

		_, err := h.Run(context.Background(), testRequest(map[string]any{"url": "http://127.0.0.1:1/"}))
		require.ErrorIs(t, err, ErrUnguardedTransport)
		assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
		assert.False(t, called.Load())
	})
	t.Run("the caller's client is not modified", func(t *testing.T) {
		t.Parallel()
		client := &http.Client{}
		_ = NewHTTP(HTTPOptions{Client: client, Allow: []string{"10.0.0.0/8"}})
		assert.Nil(t, client.Transport)
		assert.Nil(t, client.CheckRedirect)
	})
}

// roundTripFunc is an http.RoundTripper that is not an *http.Transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHTTPInvalidAllowFailsClosed(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, "", respondWith(http.StatusOK, ""))
	h := NewHTTP(HTTPOptions{Allow: []string{"127.0.0.1", "10.0.0.0/33"}})

	_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
	require.ErrorIs(t, err, ErrInvalidAllow)
	assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
	assert.Zero(t, hits.Load())
}

func TestHTTPBodyCapStopsReading(t *testing.T) {
	t.Parallel()
	const total = 64 << 20 // far over the cap, and over what socket buffers hold
	tests := []struct {
		name   string
		status int
		class  stage.Class
	}{
		{name: "2xx body over the cap", status: http.StatusOK, class: stage.ClassPermanent},
		{name: "error body", status: http.StatusInternalServerError, class: stage.ClassRetryable},
		{name: "4xx body", status: http.StatusBadRequest, class: stage.ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			written := make(chan int, 1)
			srv, _ := countingServer(t, "", func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				chunk := []byte(strings.Repeat("x", 32<<10))
				n := 0
				for n < total {
					m, err := w.Write(chunk)
					n += m
					if err != nil {
						break
					}
				}
				written <- n
			})
			h := NewHTTP(HTTPOptions{MaxResponseBytes: 1 << 10})

			_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
			requireStageError(t, err, tt.class, tt.status)
			select {
			case n := <-written:
				assert.Less(t, n, total/2, "the handler stops reading and closes the connection")
			case <-time.After(20 * time.Second):
				t.Fatal("the server kept writing: the response body was not closed")
			}
		})
	}
}
