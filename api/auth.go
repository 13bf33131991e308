package api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/wire"
)

// Auth on the wire (docs/api.md, Auth).
const (
	// TokenCookie holds the console's token (base64url, no padding) once POST /login took it.
	TokenCookie = "executor_token"
	// ConsoleHeader must be "1" on a mutating request authenticated by TokenCookie: a
	// cross-site form cannot set it, so a page of another site cannot act with the cookie.
	ConsoleHeader = "X-Executor-Console"
	// RoleHeader tells an authenticated caller its role ("read" or "operate"); the console
	// shows it with its log-out button.
	RoleHeader = "X-Executor-Role"
	// ActorHeader tells an authenticated caller who it is: its token's holder ("anonymous"
	// for a token without a name); the console shows it with the role.
	ActorHeader = "X-Executor-Actor"
	// authChallenge is the WWW-Authenticate of every 401.
	authChallenge = `Bearer realm="executor"`
)

// publicRoutes answer without a token: the probes of load balancers and kubelets, and the
// login form's POST, which checks the token it is given itself. "METHOD path".
var publicRoutes = map[string]bool{
	"GET /healthz": true, "HEAD /healthz": true,
	"GET /readyz": true, "HEAD /readyz": true,
	"POST /login": true,
}

// routePath is the path chi routes on: the raw (still escaped) path when there is one, so
// that "/%68ealthz" is not taken for the public "/healthz".
func routePath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

// isPublic reports whether r may go without a token.
func isPublic(r *http.Request) bool {
	return publicRoutes[r.Method+" "+routePath(r)]
}

// safeMethod reports whether method only reads: GET and HEAD.
func safeMethod(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// neededRole is the role r needs: read for GET and HEAD, and for POST /logout (logging out
// changes nothing on the server; every token may do it); operate for anything else.
func neededRole(r *http.Request) auth.Role {
	if safeMethod(r.Method) || (r.Method == http.MethodPost && routePath(r) == "/logout") {
		return auth.RoleRead
	}
	return auth.RoleOperate
}

// credential is the token a request presents.
type credential struct {
	token      string
	present    bool // an Authorization header or the cookie was sent
	fromCookie bool // the token came from TokenCookie (the console), not Authorization
}

// credentialOf reads Authorization: Bearer <token>, else the console's cookie. A request with
// an Authorization header is judged by it alone, even if it also carries the cookie.
func credentialOf(r *http.Request) credential {
	if v := r.Header.Get("Authorization"); v != "" {
		scheme, token, _ := strings.Cut(v, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return credential{present: true} // Basic, ...: not a token of ours
		}
		return credential{token: strings.TrimSpace(token), present: true}
	}
	c, err := r.Cookie(TokenCookie)
	if err != nil {
		return credential{}
	}
	token, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return credential{present: true, fromCookie: true}
	}
	return credential{token: string(token), present: true, fromCookie: true}
}

// authenticate enforces the tokens of Options.Auth; with none it is a no-op and the API is
// open. It runs before routing, so an unknown path without a token is a 401 like a known
// one: probing does not reveal which routes exist. The token itself is never logged.
func (h *handlers) authenticate(next http.Handler) http.Handler {
	keys := h.opts.Auth
	if !keys.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isPublic(r) {
			next.ServeHTTP(w, r)
			return
		}
		cred := credentialOf(r)
		holder, ok := auth.Holder{}, false
		if cred.present {
			holder, ok = keys.Match(cred.token)
		}
		role := holder.Role
		if !ok {
			h.unauthenticated(w, r, cred)
			return
		}
		need := neededRole(r)
		if !role.Allows(need) {
			h.forbidden(w, r, role, fmt.Sprintf("%s %s needs a token with role %s; this token has role %s",
				r.Method, r.URL.Path, need, role))
			return
		}
		if cred.fromCookie && !safeMethod(r.Method) && r.Header.Get(ConsoleHeader) != "1" {
			h.forbidden(w, r, role, fmt.Sprintf("a change authenticated by the console's cookie needs the header %s: 1", ConsoleHeader))
			return
		}
		w.Header().Set(RoleHeader, string(role))
		w.Header().Set(ActorHeader, holder.Actor())
		next.ServeHTTP(w, r.WithContext(auth.WithHolder(r.Context(), holder)))
	})
}

// unauthenticated answers a request without a valid token: 401 with a Bearer challenge, as a
// problem, or as the console's login page for a browser opening the console.
func (h *handlers) unauthenticated(w http.ResponseWriter, r *http.Request, cred credential) {
	challenge := authChallenge
	detail := "this request needs a bearer token: send Authorization: Bearer <token> " +
		"(executor CLI: --token or EXECUTOR_TOKEN)"
	if cred.present {
		challenge += `, error="invalid_token"`
		detail = "the bearer token is not valid: unknown, revoked or malformed"
		h.opts.Logger.Warn("http request with an invalid token refused",
			"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path,
			"remote", r.RemoteAddr, "cookie", cred.fromCookie)
	} else {
		h.opts.Logger.Debug("http request without a token refused",
			"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	if h.consolePage(r) {
		msg := ""
		if cred.present {
			msg = "Your token was not accepted (unknown or revoked): log in again."
		}
		console.LoginPage(w, http.StatusUnauthorized, msg)
		return
	}
	h.writeError(w, r, &requestError{status: http.StatusUnauthorized, typ: wire.ProblemUnauthorized, detail: detail})
}

// forbidden answers a valid token that may not do what r asks: 403, detail naming why.
func (h *handlers) forbidden(w http.ResponseWriter, r *http.Request, role auth.Role, detail string) {
	h.opts.Logger.Warn("http request forbidden",
		"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path, "role", string(role), "reason", detail)
	h.writeError(w, r, &requestError{status: http.StatusForbidden, typ: wire.ProblemForbidden, detail: detail})
}

// consolePage reports whether r is a browser opening the console (GET / or an asset), which
// gets the login page rather than a problem.
func (h *handlers) consolePage(r *http.Request) bool {
	if h.opts.Console == nil || !safeMethod(r.Method) {
		return false
	}
	p := routePath(r)
	return p == "/" || strings.HasPrefix(p, "/assets/")
}
