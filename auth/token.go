package auth

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
)

// Role is what a token may do.
type Role string

// Roles, from least to most.
const (
	RoleRead    Role = "read"    // GET routes: plans, tasks, tenants, events, metrics, console
	RoleOperate Role = "operate" // read, plus submitting plans and every pause/resume/cancel/retry
)

// Allows reports whether r may do what need requires.
func (r Role) Allows(need Role) bool {
	switch need {
	case RoleRead:
		return r == RoleRead || r == RoleOperate
	case RoleOperate:
		return r == RoleOperate
	default:
		return false
	}
}

// MinTokenLength is the shortest token accepted: 16 bytes, guessable in no useful time.
const MinTokenLength = 16

// ErrInvalidToken: a configured token is malformed (role, length or characters).
var ErrInvalidToken = errors.New("auth: invalid token")

// Token is one configured bearer token.
type Token struct {
	Role Role
	// Name is who holds the token ("alice", "ci-pipeline"), recorded as the actor of what it
	// does; "" for a token written without one (role:secret), an anonymous holder.
	Name   string
	Secret string
}

// Holder is who presented a token: its role and its holder's name ("" when anonymous).
type Holder struct {
	Role Role
	Name string
}

// anonymous is the actor of a token without a name.
const anonymous = "anonymous"

// Actor is the holder's name, or "anonymous" for a token written without one.
func (h Holder) Actor() string {
	if h.Name == "" {
		return anonymous
	}
	return h.Name
}

// NamePattern is what a token holder's name must match.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// String prints the role, the holder's name and a fingerprint, never the secret.
func (t Token) String() string {
	if t.Name == "" {
		return string(t.Role) + ":" + t.Fingerprint()
	}
	return string(t.Role) + ":" + t.Name + ":" + t.Fingerprint()
}

// LogValue keeps the secret out of structured logs.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// Fingerprint is the first 8 hex digits of the secret's SHA-256: enough to tell tokens apart
// in logs and config reviews, useless for guessing the secret.
func (t Token) Fingerprint() string {
	sum := sha256.Sum256([]byte(t.Secret))
	return hex.EncodeToString(sum[:4])
}

// ParseToken reads one "role:name:secret" token, or "role:secret" for an anonymous holder. A
// secret that holds a ':' must be written with a name: "role:x:y" is the holder x with the
// secret y.
func ParseToken(s string) (Token, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ":", 3)
	if len(parts) < 2 {
		return Token{}, fmt.Errorf("%w: want role:name:secret or role:secret (role read or operate)", ErrInvalidToken)
	}
	t := Token{Role: Role(strings.TrimSpace(parts[0])), Secret: strings.TrimSpace(parts[len(parts)-1])}
	if len(parts) == 3 {
		t.Name = strings.TrimSpace(parts[1])
		if !NamePattern.MatchString(t.Name) {
			return Token{}, fmt.Errorf("%w: holder name %q: want %s", ErrInvalidToken, t.Name, NamePattern)
		}
		if t.Name == anonymous {
			return Token{}, fmt.Errorf("%w: holder name %q is what a token without a name acts as: choose another", ErrInvalidToken, t.Name)
		}
	}
	if t.Role != RoleRead && t.Role != RoleOperate {
		return Token{}, fmt.Errorf("%w: role %q: want read or operate", ErrInvalidToken, t.Role)
	}
	if len(t.Secret) < MinTokenLength {
		return Token{}, fmt.Errorf("%w: a %s token is %d bytes: want at least %d", ErrInvalidToken, t.Role, len(t.Secret), MinTokenLength)
	}
	for _, c := range []byte(t.Secret) {
		if c <= ' ' || c == 0x7f || c == ',' {
			return Token{}, fmt.Errorf("%w: a %s token holds a space, comma or control character", ErrInvalidToken, t.Role)
		}
	}
	return t, nil
}

// ParseList reads comma-separated tokens (EXECUTOR_TOKENS), each as ParseToken reads it.
func ParseList(s string) ([]Token, error) {
	var out []Token
	for i, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		t, err := ParseToken(part)
		if err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// ReadFile reads one token per line (as ParseToken reads it); blank lines and lines starting with # are
// skipped.
func ReadFile(r io.Reader) ([]Token, error) {
	var out []Token
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := ParseToken(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth: read tokens: %w", err)
	}
	return out, nil
}

// Distinct checks that no two tokens share a secret: a secret names one holder and role (the
// first would win, silently). The error names both tokens by position (1-based) and
// fingerprint, never the secret.
func Distinct(tokens []Token) error {
	seen := map[string]int{}
	for i, t := range tokens {
		if j, dup := seen[t.Secret]; dup {
			return fmt.Errorf("%w: tokens %d and %d have the same secret (fingerprint %s): a secret names one holder",
				ErrInvalidToken, j+1, i+1, t.Fingerprint())
		}
		seen[t.Secret] = i
	}
	return nil
}

// Keys are the configured tokens. The zero value holds none.
type Keys struct {
	tokens []Token
}

// NewKeys returns the keys of tokens.
func NewKeys(tokens []Token) *Keys {
	return &Keys{tokens: append([]Token(nil), tokens...)}
}

// Enabled reports whether any token is configured (then every protected route needs one).
func (k *Keys) Enabled() bool { return k != nil && len(k.tokens) > 0 }

// Match returns the holder (role and name) of the configured token equal to presented. Every
// configured token is compared, each in constant time, whatever matches.
func (k *Keys) Match(presented string) (Holder, bool) {
	if k == nil {
		return Holder{}, false
	}
	var h Holder
	found := 0
	p := []byte(presented)
	for _, t := range k.tokens {
		eq := subtle.ConstantTimeCompare(p, []byte(t.Secret))
		if eq == 1 && found == 0 {
			h = Holder{Role: t.Role, Name: t.Name}
		}
		found |= eq
	}
	return h, found == 1
}
