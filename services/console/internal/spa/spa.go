// Package spa serves a built single-page app from memory: hashed assets
// cached for a year, index.html revalidated on every load, unknown paths
// answered with index.html so the client router can resolve them, and
// every text file gzip-compressed once at start rather than per request.
package spa

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Cache-Control values; docs/console.md names them.
const (
	CacheImmutable  = "public, max-age=31536000, immutable"
	CacheRevalidate = "no-cache"
)

// ContentSecurityPolicy is sent with every page of the console. Scripts
// come only from the console's own origin (Vite emits no inline script),
// so markup injected into a page cannot run. 'unsafe-eval' is there for
// one library: the evaluator forms validate with Ajv (@rjsf/validator-ajv8),
// which compiles each JSON Schema into a function; 'unsafe-inline' styles
// for the style attributes and sheets that React, uPlot and CodeMirror set.
// The API is the same origin (the gateway serves both); nothing is framed,
// nor may frame the console.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-src 'none'; frame-ancestors 'none'"

// NotBuilt is the body of the 503 page served when the app was not built
// before the binary was.
const NotBuilt = "console not built: run make console"

// file is one asset held in memory.
type file struct {
	body  []byte
	gz    []byte // nil when compression would not pay
	etag  string
	ctype string
	cache string
}

// Handler serves the app. Paths it receives are relative to the app's base
// ("" or "traces/1" for /console/ and /console/traces/1).
type Handler struct {
	files map[string]*file
	index *file
}

// New reads every file of fsys into memory. The app's files are a few
// megabytes at most and never change while the process runs, so reading
// them once makes every request a map lookup.
func New(fsys fs.FS) (*Handler, error) {
	h := &Handler{files: map[string]*file{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(p) == ".keep" {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f := &file{body: body, ctype: contentType(p), cache: CacheRevalidate}
		if strings.HasPrefix(p, "assets/") {
			f.cache = CacheImmutable // Vite names them by content hash
		}
		sum := sha256.Sum256(body)
		f.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		if compressible(f.ctype) && len(body) > 512 {
			gz, err := gzipBytes(body)
			if err != nil {
				return err
			}
			if len(gz) < len(body) {
				f.gz = gz
			}
		}
		h.files[p] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the console's files: %w", err)
	}
	h.index = h.files["index.html"]
	return h, nil
}

// Built reports whether the app was built (index.html is there).
func (h *Handler) Built() bool { return h.index != nil }

// Serve answers GET or HEAD for the app path p.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, p string) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	if h.index == nil {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "<!doctype html><title>Assay console</title><p>%s</p>\n", NotBuilt)
		return
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	f, ok := h.files[p]
	if !ok {
		// A missing hashed asset is a stale page asking for an old build:
		// index.html in its place would be run as a script.
		if strings.HasPrefix(p, "assets/") {
			hdr.Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintln(w, "no such asset:", p)
			return
		}
		f = h.index // a client route
	}
	if f.ctype == "text/html; charset=utf-8" {
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "same-origin")
	}
	hdr.Set("Content-Type", f.ctype)
	hdr.Set("Cache-Control", f.cache)
	hdr.Set("ETag", f.etag)
	body := f.body
	if f.gz != nil {
		hdr.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			hdr.Set("Content-Encoding", "gzip")
			body = f.gz
		}
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json", ".map":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".woff2":
		return "font/woff2"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") ||
		strings.HasPrefix(ctype, "image/svg")
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed without
// q=0.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}
