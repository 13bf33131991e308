package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// contentTypes pins the Content-Type of the kinds of file the console ships, whatever the
// host's MIME tables say.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// csp keeps the page on its own origin: scripts, styles and API calls come from the server
// that served it, and nothing else.
const csp = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// file is an embedded file ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// FS returns the embedded files, rooted at static/ (index.html, assets/...).
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // static is embedded: it exists
	}
	return sub
}

// Handler serves the console: GET / is index.html, GET /assets/<name> the embedded asset;
// any other path, or an unknown asset, is a 404.
func Handler() http.Handler {
	files := map[string]file{}
	root := FS()
	err := fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = mime.TypeByExtension(path.Ext(name))
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		files["/"+name] = file{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic(err) // static is embedded: it reads
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path
		if name == "/" {
			name = "/index.html"
		} else if !strings.HasPrefix(name, "/assets/") {
			http.NotFound(w, r)
			return
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		if name == "/index.html" {
			h.Set("Content-Security-Policy", csp)
			h.Set("Referrer-Policy", "no-referrer")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}
