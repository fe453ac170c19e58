package e2e

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServedThroughGateway: the gateway sends / to the console, and the
// console's files come through it with their caching and compression.
func TestServedThroughGateway(t *testing.T) {
	env := Shared(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header ...string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", env.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}
	expect := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}

	res, _ := get("/")
	expect("/ status", res.StatusCode, http.StatusFound)
	expect("/ Location", res.Header.Get("Location"), "/console/")

	index, err := os.ReadFile(filepath.Join(root(), "services", "console", "web", "dist", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	// index.html, for the app's root and for any client route below it.
	for _, path := range []string{"/console/", "/console", "/console/signin", "/console/traces/0123abcd?x=1", "/api/console/settings/keys"} {
		res, body := get(path, "Accept-Encoding", "identity")
		expect(path+" status", res.StatusCode, http.StatusOK)
		expect(path+" body is index.html", string(body), string(index))
		expect(path+" Cache-Control", res.Header.Get("Cache-Control"), "no-cache")
		expect(path+" Content-Type", res.Header.Get("Content-Type"), "text/html; charset=utf-8")
	}
	// revalidation
	res, _ = get("/console/")
	etag := res.Header.Get("ETag")
	res, _ = get("/console/", "If-None-Match", etag)
	expect("revalidated index status", res.StatusCode, http.StatusNotModified)

	// hashed assets: cached for a year, gzip when asked for
	scripts := initialScripts(t, index)
	for _, name := range scripts {
		raw, err := os.ReadFile(filepath.Join(root(), "services", "console", "web", "dist", name))
		if err != nil {
			t.Fatal(err)
		}
		res, body := get("/console/"+name, "Accept-Encoding", "gzip")
		expect(name+" status", res.StatusCode, http.StatusOK)
		expect(name+" Cache-Control", res.Header.Get("Cache-Control"), "public, max-age=31536000, immutable")
		expect(name+" Content-Type", res.Header.Get("Content-Type"), "text/javascript; charset=utf-8")
		if len(raw) > 1024 {
			expect(name+" Content-Encoding", res.Header.Get("Content-Encoding"), "gzip")
			zr, err := gzip.NewReader(strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			expect(name+" decompressed", string(plain), string(raw))
		}
		res, body = get("/console/"+name, "Accept-Encoding", "identity")
		expect(name+" identity", string(body), string(raw))
	}
	// a stale asset is a 404, not index.html run as a script
	res, _ = get("/console/assets/index-gone.js")
	expect("missing asset status", res.StatusCode, http.StatusNotFound)
}
