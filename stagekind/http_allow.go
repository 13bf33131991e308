package stagekind

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Allow-list errors, matched with errors.Is.
var (
	// ErrInvalidAllow is matched by the error of ParseAllowList for an entry that is neither an
	// IP, a CIDR, a hostname nor a wildcard "*.suffix"; the error names the entry.
	ErrInvalidAllow = errors.New("invalid http allow-list entry")
	// ErrDestinationDenied is matched by the failure of an http attempt (permanent, never
	// retried) whose URL or redirect target is outside the allow-list, or is a link-local,
	// cloud metadata, unspecified, multicast or broadcast address that no IP or CIDR entry
	// lists. The error names the host and, once resolved, the IP.
	ErrDestinationDenied = errors.New("destination denied")
)

// metadataAddrs are cloud metadata services outside 169.254.0.0/16, always denied unless an IP
// or CIDR entry lists them: AWS over IPv6, Alibaba Cloud and Oracle Cloud. (169.254.169.254,
// used by AWS, GCP, Azure and others, is link-local and denied as such.)
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("192.0.0.192"),
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // "this network"; Linux dials 0.0.0.0 as loopback
	broadcast   = netip.MustParseAddr("255.255.255.255") // limited broadcast
	nat64       = netip.MustParsePrefix("64:ff9b::/96")  // well-known NAT64 prefix, embeds an IPv4 address
)

// AllowList is the http kind's destination allow-list (--http-allow), built by
// ParseAllowList. A connection to IP x for the URL host h is
//
//   - denied when x is link-local (169.254.0.0/16, fe80::/10, which holds the usual
//     169.254.169.254 metadata address), another cloud metadata address (fd00:ec2::254,
//     100.100.100.200, 192.0.0.192), unspecified (0.0.0.0/8, ::), multicast or broadcast,
//     unless x is inside a listed IP or CIDR (a listed hostname does not open these);
//   - otherwise allowed when the list is empty;
//   - otherwise allowed if and only if x is inside a listed IP or CIDR, or h matches a listed
//     hostname or wildcard.
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked as the IPv4 address they carry, and
// NAT64 addresses (64:ff9b::/96) are also checked as theirs. A nil or empty AllowList allows
// everything but the always-denied addresses. An AllowList is immutable and safe for concurrent
// use.
type AllowList struct {
	prefixes []netip.Prefix // IP entries as /32 or /128, unmapped
	hosts    []string       // exact hostnames, lower-case, without a trailing dot
	suffixes []string       // ".corp.example.com" from "*.corp.example.com"
}

// ParseAllowList checks and parses allow-list entries. Each entry, surrounding spaces ignored,
// is one of
//
//	10.1.2.3, ::1           an IP (an IPv4-mapped IPv6 address means its IPv4 address)
//	10.20.0.0/16, fd00::/8  a CIDR (host bits are ignored: 10.20.1.1/16 means 10.20.0.0/16)
//	deploy.internal         a hostname, matched exactly, case-insensitive, trailing dot ignored
//	*.corp.example.com      any sub-domain of corp.example.com, at any depth, but not itself
//
// Anything else (an empty entry, a URL, a host:port, an IP with a zone, a bad CIDR such as
// 10.0.0.0/33, a hostname whose last label is numeric) fails with an error matching
// ErrInvalidAllow that names the entry. No entries give an empty list.
func ParseAllowList(entries []string) (*AllowList, error) {
	l := &AllowList{}
	for _, raw := range entries {
		if err := l.add(raw); err != nil {
			return nil, fmt.Errorf("stagekind: %w %q: %s", ErrInvalidAllow, raw, err.Error())
		}
	}
	return l, nil
}

// add parses one entry into l; its error is the reason the entry is invalid.
func (l *AllowList) add(raw string) error {
	entry := strings.TrimSpace(raw)
	switch {
	case entry == "":
		return errors.New("is empty")
	case strings.Contains(entry, "://"):
		return errors.New("is a URL: list its host only")
	case strings.Contains(entry, "/"):
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return fmt.Errorf("is not a CIDR: %v", err)
		}
		l.prefixes = append(l.prefixes, unmapPrefix(p.Masked()))
		return nil
	case strings.Contains(entry, ":") || isNumericHost(entry):
		ip, err := netip.ParseAddr(entry)
		if err != nil {
			return fmt.Errorf("is not an IP address (a host:port or URL is not an entry): %v", err)
		}
		if ip.Zone() != "" {
			return errors.New("is an IP with a zone, which cannot be listed")
		}
		ip = ip.Unmap()
		l.prefixes = append(l.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
		return nil
	case strings.HasPrefix(entry, "*."):
		name, ok := normalHost(entry[2:])
		if !ok {
			return errors.New(`is not a wildcard: want "*." and a hostname, as in *.corp.example.com`)
		}
		l.suffixes = append(l.suffixes, "."+name)
		return nil
	}
	name, ok := normalHost(entry)
	if !ok {
		return errors.New("is not an IP, a CIDR, a hostname nor a wildcard *.domain")
	}
	l.hosts = append(l.hosts, name)
	return nil
}

// unmapPrefix turns an IPv4-mapped IPv6 prefix of at least /96 into its IPv4 prefix, so that
// it matches the unmapped addresses Check compares.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// isNumericHost reports whether name looks like an IPv4 address rather than a hostname: its
// last label is all digits (as URL parsers decide).
func isNumericHost(name string) bool {
	last := strings.TrimSuffix(name, ".")
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	if last == "" {
		return false
	}
	for _, c := range []byte(last) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// normalHost lower-cases name and drops one trailing dot, and reports whether it is a valid
// DNS hostname: labels of 1 to 63 letters, digits, '-' or '_' (not starting or ending with
// '-'), at most 253 characters, the last label not numeric.
func normalHost(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" || len(name) > 253 || isNumericHost(name) {
		return "", false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return name, true
}

// Empty reports whether the list has no entries (then only the always-denied addresses are
// denied). A nil list is empty.
func (l *AllowList) Empty() bool {
	return l == nil || len(l.prefixes)+len(l.hosts)+len(l.suffixes) == 0
}

// Check reports whether the http kind may connect to ip for a URL whose host is host (a
// hostname, or the IP itself). It returns nil when allowed, else an error matching
// ErrDestinationDenied that names host and ip.
func (l *AllowList) Check(host string, ip netip.Addr) error {
	ip = embeddedIPv4(ip.WithZone(""))
	if l.inPrefixes(ip) {
		return nil
	}
	if kind := alwaysDenied(ip); kind != "" {
		return fmt.Errorf("stagekind: %w: host %q, IP %s: %s address, denied unless an IP or CIDR entry of --http-allow lists it",
			ErrDestinationDenied, host, ip, kind)
	}
	if l.Empty() || l.matchHost(host) {
		return nil
	}
	return fmt.Errorf("stagekind: %w: host %q, IP %s: outside --http-allow", ErrDestinationDenied, host, ip)
}

// precheck decides what can be decided from the URL's host alone, before any DNS lookup or
// dial: an IP literal gets the full Check, and a hostname is denied when the list is not empty,
// has no IP or CIDR entries and no hostname entry matches it. Anything else is left to the
// dial-time check of every resolved address.
func (l *AllowList) precheck(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return l.Check(host, ip)
	}
	if l.Empty() || len(l.prefixes) > 0 || l.matchHost(host) {
		return nil
	}
	return fmt.Errorf("stagekind: %w: host %q: outside --http-allow", ErrDestinationDenied, host)
}

func (l *AllowList) inPrefixes(ip netip.Addr) bool {
	if l == nil {
		return false
	}
	for _, p := range l.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// matchHost reports whether host matches a hostname or wildcard entry.
func (l *AllowList) matchHost(host string) bool {
	if l == nil {
		return false
	}
	name, ok := normalHost(host)
	if !ok {
		return false // an IP literal or not a hostname
	}
	for _, h := range l.hosts {
		if name == h {
			return true
		}
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 address an IPv6 one carries in its last 32 bits when it is an
// IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d, deprecated but still parsed)
// address, so that every form of a denied IPv4 address is denied (::a9fe:a9fe is
// 169.254.169.254); any other address as it is (:: and ::1 stay IPv6).
func embeddedIPv4(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if !ip.Is6() || ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback() {
		return ip
	}
	b := ip.As16()
	for _, c := range b[:12] {
		if c != 0 {
			return ip
		}
	}
	return netip.AddrFrom4([4]byte(b[12:]))
}

// alwaysDenied names the category of an address that no hostname entry and no empty list
// allows, or returns "" for any other address. ip is unmapped and has no zone.
func alwaysDenied(ip netip.Addr) string {
	for _, m := range metadataAddrs {
		if ip == m {
			return "a cloud metadata"
		}
	}
	switch {
	case ip.IsLinkLocalUnicast():
		return "a link-local"
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return "an unspecified"
	case ip.IsMulticast():
		return "a multicast"
	case ip == broadcast:
		return "a broadcast"
	case nat64.Contains(ip):
		b := ip.As16()
		if kind := alwaysDenied(netip.AddrFrom4([4]byte(b[12:]))); kind != "" {
			return kind
		}
	}
	return ""
}
