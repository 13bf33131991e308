package server

import (
	"net"
	"net/netip"
	"sync/atomic"
)

// selfURL is the base URL of the executor's own HTTP API, known once Server.Start listens:
// what stage templates read as .ExecutorURL ("" for an executor without HTTP, the bench).
type selfURL struct{ v atomic.Pointer[string] }

// set records the address the API listens on.
func (u *selfURL) set(addr net.Addr) {
	s := baseURL(addr.String())
	u.v.Store(&s)
}

// get returns the base URL, or "" before the API listens.
func (u *selfURL) get() string {
	if p := u.v.Load(); p != nil {
		return *p
	}
	return ""
}

// baseURL turns a listen address into the URL a process on the same host reaches it at: a
// listener on every interface (0.0.0.0, ::) is reached over loopback.
func baseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		if ip.Is4() {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
