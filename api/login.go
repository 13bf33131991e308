package api

import (
	"encoding/base64"
	"net/http"

	"github.com/executor-dev/executor/console"
)

// maxLoginBytes bounds the body of POST /login: one form field holding a token.
const maxLoginBytes = 8 << 10

// login is POST /login, the console's login form (public): a valid token in the form field
// "token" becomes the console's cookie and the browser goes to / (303); anything else shows
// the form again with a 401. A form posted from another origin is refused (403), so that no
// other site can log a browser in with a token of its choosing.
func (h *handlers) login(w http.ResponseWriter, r *http.Request) {
	if err := crossOrigin.Check(r); err != nil {
		h.opts.Logger.Warn("console login from another origin refused",
			"request_id", requestIDOf(r), "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
		console.LoginPage(w, http.StatusForbidden, "This form was posted from another site: log in from the console itself.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	if err := r.ParseForm(); err != nil {
		w.Header().Set("WWW-Authenticate", authChallenge)
		console.LoginPage(w, http.StatusUnauthorized, "The form could not be read: enter the token again.")
		return
	}
	token := r.PostForm.Get("token")
	holder, ok := h.opts.Auth.Match(token)
	if !ok {
		h.opts.Logger.Warn("console login refused",
			"request_id", requestIDOf(r), "remote", r.RemoteAddr, "empty", token == "")
		w.Header().Set("WWW-Authenticate", authChallenge+`, error="invalid_token"`)
		msg := "Unknown token: check it and try again."
		if token == "" {
			msg = "Enter a token."
		}
		console.LoginPage(w, http.StatusUnauthorized, msg)
		return
	}
	http.SetCookie(w, tokenCookie(r, base64.RawURLEncoding.EncodeToString([]byte(token)), 0))
	h.opts.Logger.Info("console login", "request_id", requestIDOf(r), "role", string(holder.Role), "actor", holder.Actor(), "remote", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout is POST /logout: the console's cookie is cleared and the browser goes to / (303),
// which shows the login form. Like every route it needs a token (and, with the cookie, the
// console's header).
func (h *handlers) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, tokenCookie(r, "", -1))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// tokenCookie is the console's cookie with value: HttpOnly (no script reads it), SameSite
// Strict (no other site's request carries it), Secure over TLS; a session cookie, or deleted
// when maxAge < 0.
func tokenCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: TokenCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	}
}

// crossOrigin refuses a form posted by another origin's page (Sec-Fetch-Site, else Origin
// against Host); requests without those headers (curl, the CLI) pass.
var crossOrigin = http.NewCrossOriginProtection()
