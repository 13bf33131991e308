package stagekind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrUnguardedTransport is matched by the failure of every attempt of an http kind whose
// HTTPOptions.Client has a Transport that is not an *http.Transport: the SSRF guard must own
// the transport's dialing, and cannot inside an arbitrary http.RoundTripper.
var ErrUnguardedTransport = errors.New("http client transport cannot be guarded")

// Dialer settings of the guarded transport (those of http.DefaultTransport).
const (
	dialTimeout   = 30 * time.Second
	dialKeepAlive = 30 * time.Second
)

// dialHostKey is the dial context key of the URL host being dialled, for guard.control.
type dialHostKey struct{}

// guard enforces an AllowList on the connections of one http kind.
type guard struct {
	allow  *AllowList
	dialer *net.Dialer
}

func newGuard(allow *AllowList) *guard {
	g := &guard{allow: allow}
	g.dialer = &net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, ControlContext: g.control}
	return g
}

// transport returns a clone of rt (nil means http.DefaultTransport) that dials through the
// guard: no environment proxy (a proxy would make the dialled address the proxy's, not the
// destination's), no custom Dial or DialTLS functions, and every connection checked.
func (g *guard) transport(rt http.RoundTripper) (*http.Transport, error) {
	if rt == nil {
		rt = http.DefaultTransport
	}
	base, ok := rt.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("stagekind: %w: HTTPOptions.Client.Transport is a %T, not an *http.Transport", ErrUnguardedTransport, rt)
	}
	t := base.Clone()
	t.Proxy = nil
	// A Dial or DialTLS function of the caller's transport would bypass the guard.
	//lint:ignore SA1019 the deprecated fields are cleared precisely because a caller may still set them
	t.Dial, t.DialTLS, t.DialTLSContext = nil, nil, nil
	t.DialContext = g.dialContext
	return t, nil
}

// dialContext checks what the URL host alone decides, then dials with the host in the
// context, so that control checks every address the dialer actually connects to (after DNS:
// a rebinding name cannot slip a denied address in).
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("stagekind: dial %s: %w", addr, err)
	}
	if err := g.allow.precheck(host); err != nil {
		return nil, err
	}
	return g.dialer.DialContext(context.WithValue(ctx, dialHostKey{}, host), network, addr)
}

// control is the dialer's check of each socket's destination, before it connects.
func (g *guard) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	host, _ := ctx.Value(dialHostKey{}).(string)
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("stagekind: %w: host %q: cannot read the address %q being dialled", ErrDestinationDenied, host, address)
	}
	return g.allow.Check(host, ap.Addr())
}

// checkRedirect wraps a redirect policy: a redirect to a host that precheck denies fails
// before anything is dialled. (Its resolved addresses are checked when it is dialled.)
func (g *guard) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := g.allow.precheck(req.URL.Hostname()); err != nil {
			return fmt.Errorf("redirect: %w", err)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}
