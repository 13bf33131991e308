package stagekind

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustAllow parses entries, which must be valid.
func mustAllow(t *testing.T, entries ...string) *AllowList {
	t.Helper()
	l, err := ParseAllowList(entries)
	require.NoError(t, err)
	return l
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		entry string
		ok    bool
	}{
		{name: "ipv4", entry: "10.1.2.3", ok: true},
		{name: "ipv6", entry: "::1", ok: true},
		{name: "ipv4-mapped ipv6", entry: "::ffff:10.1.2.3", ok: true},
		{name: "cidr", entry: "10.20.0.0/16", ok: true},
		{name: "cidr with host bits", entry: "10.20.1.1/16", ok: true},
		{name: "ipv6 cidr", entry: "fd00::/8", ok: true},
		{name: "single-address cidr", entry: "169.254.169.254/32", ok: true},
		{name: "hostname", entry: "deploy.internal", ok: true},
		{name: "single-label hostname", entry: "localhost", ok: true},
		{name: "hostname upper-case with trailing dot", entry: "Deploy.Internal.", ok: true},
		{name: "hostname with digits, dash and underscore", entry: "a-1.svc_x.example.com", ok: true},
		{name: "surrounding spaces", entry: " deploy.internal ", ok: true},
		{name: "wildcard", entry: "*.corp.example.com", ok: true},
		{name: "empty", entry: ""},
		{name: "blank", entry: "  "},
		{name: "cidr prefix too long", entry: "10.0.0.0/33"},
		{name: "cidr not an address", entry: "10.0.0/8"},
		{name: "ipv4 out of range", entry: "256.0.0.1"},
		{name: "numeric last label", entry: "deploy.123"},
		{name: "host and port", entry: "deploy.internal:8080"},
		{name: "ip and port", entry: "10.0.0.1:80"},
		{name: "url", entry: "http://deploy.internal/"},
		{name: "ip with zone", entry: "fe80::1%eth0"},
		{name: "bare wildcard", entry: "*"},
		{name: "wildcard without dot", entry: "*corp.example.com"},
		{name: "wildcard inside", entry: "a.*.example.com"},
		{name: "double wildcard", entry: "*.*.example.com"},
		{name: "empty label", entry: "deploy..internal"},
		{name: "label starting with dash", entry: "-deploy.internal"},
		{name: "label ending with dash", entry: "deploy-.internal"},
		{name: "label over 63 characters", entry: "a234567890123456789012345678901234567890123456789012345678901234.internal"},
		{name: "space inside", entry: "deploy internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := ParseAllowList([]string{"deploy.internal", tt.entry})
			if tt.ok {
				require.NoError(t, err)
				assert.False(t, l.Empty())
				return
			}
			require.ErrorIs(t, err, ErrInvalidAllow)
			assert.Nil(t, l)
		})
	}
}

func TestParseAllowListEmpty(t *testing.T) {
	t.Parallel()
	for _, entries := range [][]string{nil, {}} {
		l, err := ParseAllowList(entries)
		require.NoError(t, err)
		assert.True(t, l.Empty())
	}
	var nilList *AllowList
	assert.True(t, nilList.Empty())
	require.NoError(t, nilList.Check("deploy.internal", netip.MustParseAddr("10.0.0.1")))
	require.ErrorIs(t, nilList.Check("metadata", netip.MustParseAddr("169.254.169.254")), ErrDestinationDenied)
}

func TestAllowListCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		allow  []string
		host   string // "" means the IP itself
		ip     string
		denied bool
	}{
		// An empty list allows anything but the always-denied addresses.
		{name: "empty: loopback", ip: "127.0.0.1"},
		{name: "empty: ipv6 loopback", ip: "::1"},
		{name: "empty: private", ip: "10.1.2.3"},
		{name: "empty: public", host: "example.com", ip: "93.184.215.14"},
		{name: "empty: metadata", ip: "169.254.169.254", denied: true},
		{name: "empty: metadata by name", host: "metadata.google.internal", ip: "169.254.169.254", denied: true},
		{name: "empty: aws ipv6 metadata", ip: "fd00:ec2::254", denied: true},
		{name: "empty: alibaba metadata", ip: "100.100.100.200", denied: true},
		{name: "empty: oracle metadata", ip: "192.0.0.192", denied: true},
		{name: "empty: link-local", ip: "169.254.1.1", denied: true},
		{name: "empty: ipv6 link-local", ip: "fe80::1", denied: true},
		{name: "empty: ipv6 link-local with zone", ip: "fe80::1%eth0", denied: true},
		{name: "empty: unspecified", ip: "0.0.0.0", denied: true},
		{name: "empty: this network", ip: "0.1.2.3", denied: true},
		{name: "empty: ipv6 unspecified", ip: "::", denied: true},
		{name: "empty: multicast", ip: "224.0.0.1", denied: true},
		{name: "empty: ipv6 multicast", ip: "ff02::1", denied: true},
		{name: "empty: broadcast", ip: "255.255.255.255", denied: true},
		{name: "empty: mapped metadata", ip: "::ffff:169.254.169.254", denied: true},
		{name: "empty: mapped unspecified", ip: "::ffff:0.0.0.0", denied: true},
		{name: "empty: nat64 metadata", ip: "64:ff9b::a9fe:a9fe", denied: true},
		{name: "empty: mapped loopback", ip: "::ffff:127.0.0.1"},
		{name: "empty: ipv4-compatible metadata", ip: "::a9fe:a9fe", denied: true},
		{name: "empty: ipv4-compatible link-local", ip: "::169.254.1.1", denied: true},
		{name: "ipv4-compatible loopback outside the list", allow: []string{"10.0.0.0/8"}, ip: "::7f00:1", denied: true},
		{name: "ipv4-compatible loopback inside an ipv4 cidr", allow: []string{"127.0.0.0/8"}, ip: "::7f00:1"},
		{name: "ipv6 loopback is not ipv4", allow: []string{"127.0.0.0/8"}, ip: "::1", denied: true},
		// A listed IP or CIDR opens the always-denied addresses; a listed hostname does not.
		{name: "listed metadata ip", allow: []string{"169.254.169.254"}, ip: "169.254.169.254"},
		{name: "listed metadata cidr", allow: []string{"169.254.169.254/32"}, ip: "169.254.169.254"},
		{name: "listed metadata, mapped", allow: []string{"169.254.169.254/32"}, ip: "::ffff:169.254.169.254"},
		{name: "listed link-local cidr", allow: []string{"169.254.0.0/16"}, ip: "169.254.7.7"},
		{name: "hostname entry does not open metadata", allow: []string{"metadata.google.internal"},
			host: "metadata.google.internal", ip: "169.254.169.254", denied: true},
		{name: "wildcard entry does not open metadata", allow: []string{"*.internal"},
			host: "metadata.google.internal", ip: "169.254.169.254", denied: true},
		{name: "hostname entry does not open link-local", allow: []string{"deploy.internal"},
			host: "deploy.internal", ip: "fe80::1", denied: true},
		{name: "other cidr does not open metadata", allow: []string{"10.0.0.0/8"}, ip: "169.254.169.254", denied: true},
		// A non-empty list allows only what it lists.
		{name: "inside cidr", allow: []string{"10.0.0.0/8"}, ip: "10.1.2.3"},
		{name: "outside cidr", allow: []string{"10.0.0.0/8"}, ip: "127.0.0.1", denied: true},
		{name: "host bits of an entry ignored", allow: []string{"10.20.1.1/16"}, ip: "10.20.200.1"},
		{name: "listed ip", allow: []string{"127.0.0.1"}, ip: "127.0.0.1"},
		{name: "other ip", allow: []string{"127.0.0.1"}, ip: "127.0.0.2", denied: true},
		{name: "listed ipv6", allow: []string{"::1"}, ip: "::1"},
		{name: "mapped address in ipv4 cidr", allow: []string{"127.0.0.0/8"}, ip: "::ffff:127.0.0.9"},
		{name: "mapped entry matches ipv4", allow: []string{"::ffff:10.1.2.3"}, ip: "10.1.2.3"},
		{name: "mapped cidr entry matches ipv4", allow: []string{"::ffff:10.0.0.0/104"}, ip: "10.9.9.9"},
		{name: "ipv4 cidr does not match ipv6", allow: []string{"10.0.0.0/8"}, ip: "fd00::1", denied: true},
		{name: "hostname", allow: []string{"deploy.internal"}, host: "deploy.internal", ip: "10.9.9.9"},
		{name: "hostname case-insensitive", allow: []string{"Deploy.Internal"}, host: "DEPLOY.internal", ip: "10.9.9.9"},
		{name: "hostname trailing dot", allow: []string{"deploy.internal."}, host: "deploy.internal", ip: "10.9.9.9"},
		{name: "hostname trailing dot in url", allow: []string{"deploy.internal"}, host: "deploy.internal.", ip: "10.9.9.9"},
		{name: "other hostname", allow: []string{"deploy.internal"}, host: "evil.example", ip: "10.9.9.9", denied: true},
		{name: "hostname is not a suffix match", allow: []string{"deploy.internal"}, host: "x.deploy.internal", ip: "10.9.9.9", denied: true},
		{name: "ip literal is not a hostname", allow: []string{"deploy.internal"}, ip: "10.9.9.9", denied: true},
		{name: "empty host", allow: []string{"deploy.internal"}, host: "-", ip: "10.9.9.9", denied: true},
		{name: "everything, metadata included", allow: []string{"0.0.0.0/0"}, ip: "169.254.169.254"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := mustAllow(t, tt.allow...)
			host := tt.host
			switch host {
			case "":
				host = tt.ip
			case "-":
				host = ""
			}
			err := l.Check(host, netip.MustParseAddr(tt.ip))
			if tt.denied {
				require.ErrorIs(t, err, ErrDestinationDenied)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestAllowListWildcard(t *testing.T) {
	t.Parallel()
	l := mustAllow(t, "*.corp.example.com")
	tests := []struct {
		host string
		ok   bool
	}{
		{host: "a.corp.example.com", ok: true},
		{host: "a.b.corp.example.com", ok: true},
		{host: "A.Corp.Example.COM", ok: true},
		{host: "a.corp.example.com.", ok: true},
		{host: "corp.example.com"},
		{host: "acorp.example.com"},
		{host: "a.corp.example.com.evil.net"},
		{host: "example.com"},
		{host: "a.corp.example.org"},
		{host: ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			err := l.Check(tt.host, netip.MustParseAddr("10.0.0.1"))
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrDestinationDenied)
		})
	}
}

func TestAllowListPrecheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		allow  []string
		host   string
		denied bool
	}{
		{name: "empty list, any hostname", host: "anything.example"},
		{name: "empty list, metadata literal", host: "169.254.169.254", denied: true},
		{name: "empty list, mapped metadata literal", host: "::ffff:169.254.169.254", denied: true},
		{name: "hostnames only, unlisted", allow: []string{"deploy.internal"}, host: "evil.example", denied: true},
		{name: "hostnames only, listed", allow: []string{"deploy.internal"}, host: "deploy.internal"},
		{name: "with a cidr, a hostname waits for its addresses", allow: []string{"10.0.0.0/8"}, host: "evil.example"},
		{name: "with a cidr, a literal outside", allow: []string{"10.0.0.0/8"}, host: "127.0.0.1", denied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mustAllow(t, tt.allow...).precheck(tt.host)
			if tt.denied {
				require.ErrorIs(t, err, ErrDestinationDenied)
				return
			}
			require.NoError(t, err)
		})
	}
}
