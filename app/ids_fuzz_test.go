package app

import (
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// crockford is the alphabet of a canonical ULID (upper case, no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// wantULID is the reference rule: 26 characters of the upper-case alphabet, the first at most
// '7' (a ULID is 128 bits).
func wantULID(s string) bool {
	if len(s) != ulid.EncodedSize || s[0] > '7' {
		return false
	}
	for i := range len(s) {
		if !containsByte(crockford, s[i]) {
			return false
		}
	}
	return true
}

// wantTenantID is the reference rule of ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$, byte by byte.
func wantTenantID(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}

// FuzzIDs checks the validation of the ids that become part of Redis keys (path parameters,
// query parameters): it never panics, it accepts exactly what the documented rules allow
// (nothing with ':', '{', '}', '*', '/', spaces or control characters), and it refuses with
// an ErrInvalidInput naming the field. Seeds: below and testdata/fuzz/FuzzIDs.
func FuzzIDs(f *testing.F) {
	for _, seed := range []string{
		"", "01J9ZQ3V1Y8R6T4M2N0P5K7H3A", "01j9zq3v1y8r6t4m2n0p5k7h3a", "81J9ZQ3V1Y8R6T4M2N0P5K7H3A",
		"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01J9ZQ3V1Y8R6T4M2N0P5K7H3", "01J9ZQ3V1Y8R6T4M2N0P5K7H3AB",
		"01J9ZQ3V1Y8R6T4M2N0P5K7HIL", "01J9ZQ3V1Y8R6T4M2N0P5K7H3\n", "tenant-001", "a", "a.b_c-d",
		"-a", ".hidden", "a:b", "a{b}", "a*", "a/b", "../etc", "a b", "a\x00", "a\n", "é", "\xff",
		"t{1}", string(make([]byte, 129)), "a" + string(make([]byte, 127)),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, c := range []struct {
			field string
			check func(field, id string) error
			want  func(string) bool
		}{
			{"planId", checkULID, wantULID},
			{"tenantId", checkTenantID, wantTenantID},
		} {
			err := c.check(c.field, id)
			if c.want(id) {
				require.NoError(t, err, "%s %q follows the rule", c.field, id)
				continue
			}
			require.ErrorIs(t, err, ErrInvalidInput, "%s %q breaks the rule", c.field, id)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Len(t, ve.Violations, 1)
			require.Equal(t, c.field, ve.Violations[0].Field)
		}
	})
}
