package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A listener on every interface is reached over loopback; any other address as it is.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, addr, want string }{
		{"loopback", "127.0.0.1:9090", "http://127.0.0.1:9090"},
		{"every IPv4 interface", "0.0.0.0:8080", "http://127.0.0.1:8080"},
		{"every IPv6 interface", "[::]:8080", "http://[::1]:8080"},
		{"one address", "10.1.2.3:80", "http://10.1.2.3:80"},
		{"a name", "localhost:8080", "http://localhost:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, baseURL(tt.addr))
		})
	}
}
