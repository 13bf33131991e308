package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// loginPage is the login form the API shows instead of the console while auth is enabled and
// the browser has no valid token, with its Content-Security-Policy.
type loginPage struct {
	tmpl *template.Template
	csp  string
}

// login parses static/login.html once. Its one inline <style> block is allowed by its hash in
// the page's CSP (the console's own policy plus that hash): no inline script, no other origin.
var login = sync.OnceValue(func() loginPage {
	tmpl := template.Must(template.ParseFS(static, "static/login.html"))
	var b bytes.Buffer
	if err := tmpl.Execute(&b, loginData{}); err != nil {
		panic(err) // embedded and static: it renders
	}
	page := b.String()
	start := strings.Index(page, "<style>")
	end := strings.Index(page, "</style>")
	if start < 0 || end < start {
		panic("console: login.html has no <style> block")
	}
	sum := sha256.Sum256([]byte(page[start+len("<style>") : end]))
	return loginPage{
		tmpl: tmpl,
		csp:  csp + "; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
	}
})

// loginData is what login.html shows.
type loginData struct {
	Message string // why the form is shown again ("unknown token"); empty on first sight
}

// LoginPage writes the console's login page with status (401 in practice) and message, an
// explanation shown above the form (escaped; empty for none). The form posts the token, field
// "token", to POST /login as application/x-www-form-urlencoded.
func LoginPage(w http.ResponseWriter, status int, message string) {
	p := login()
	var b bytes.Buffer
	if err := p.tmpl.Execute(&b, loginData{Message: message}); err != nil {
		panic(err) // a string field of an embedded template: it renders
	}
	h := w.Header()
	h.Set("Content-Type", contentTypes[".html"])
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", p.csp)
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
