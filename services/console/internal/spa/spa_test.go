package spa_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	gopath "path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/console/internal/spa"
)

var app = fstest.MapFS{
	".keep":               {Data: nil},
	"index.html":          {Data: []byte(`<!doctype html><div id="root"></div>` + strings.Repeat(" ", 600))},
	"assets/index-abc.js": {Data: []byte(strings.Repeat("console.log('assay');\n", 200))},
	"assets/logo-def.png": {Data: []byte("\x89PNG not really")},
	"favicon.svg":         {Data: []byte("<svg/>")},
}

func serve(t *testing.T, h *spa.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "/console/"+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.Serve(w, r, path)
	return w
}

func TestServe(t *testing.T) {
	h, err := spa.New(app)
	require.NoError(t, err)
	require.True(t, h.Built())

	w := serve(t, h, "GET", "assets/index-abc.js")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, spa.CacheImmutable, w.Header().Get("Cache-Control"))
	assert.Equal(t, "text/javascript; charset=utf-8", w.Header().Get("Content-Type"))
	assert.Empty(t, w.Header().Get("Content-Encoding"), "not asked for")
	assert.Equal(t, "Accept-Encoding", w.Header().Get("Vary"))
	assert.Equal(t, string(app["assets/index-abc.js"].Data), w.Body.String())

	for _, ae := range []string{"gzip", "br, gzip;q=0.8", "*", "deflate, GZIP"} {
		w = serve(t, h, "GET", "assets/index-abc.js", "Accept-Encoding", ae)
		require.Equal(t, "gzip", w.Header().Get("Content-Encoding"), ae)
		zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, app["assets/index-abc.js"].Data, plain)
		assert.Less(t, w.Body.Len(), len(plain)/4)
	}
	for _, ae := range []string{"gzip;q=0", "br", "identity"} {
		w = serve(t, h, "GET", "assets/index-abc.js", "Accept-Encoding", ae)
		assert.Empty(t, w.Header().Get("Content-Encoding"), ae)
	}
	// an image is not compressed again
	w = serve(t, h, "GET", "assets/logo-def.png", "Accept-Encoding", "gzip")
	assert.Empty(t, w.Header().Get("Content-Encoding"))
	assert.Equal(t, "image/png", w.Header().Get("Content-Type"))

	// index.html and client routes: no-cache, revalidated by ETag
	for _, p := range []string{"", "index.html", "traces", "traces/abc/def", "settings/keys?x=1", "../../etc/passwd"} {
		w = serve(t, h, "GET", p)
		assert.Equal(t, http.StatusOK, w.Code, p)
		assert.Equal(t, spa.CacheRevalidate, w.Header().Get("Cache-Control"), p)
		assert.Equal(t, "text/html; charset=utf-8", w.Header().Get("Content-Type"), p)
		assert.Equal(t, "DENY", w.Header().Get("X-Frame-Options"), p)
		assert.Contains(t, w.Body.String(), `<div id="root">`, p)
	}
	etag := w.Header().Get("ETag")
	require.NotEmpty(t, etag)
	w = serve(t, h, "GET", "traces", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, w.Code)
	assert.Empty(t, w.Body.String())

	// other files at the root: revalidated too (their names carry no hash)
	w = serve(t, h, "GET", "favicon.svg")
	assert.Equal(t, spa.CacheRevalidate, w.Header().Get("Cache-Control"))
	assert.Equal(t, "image/svg+xml", w.Header().Get("Content-Type"))
	// .keep is not served as itself
	w = serve(t, h, "GET", ".keep")
	assert.Contains(t, w.Body.String(), `<div id="root">`)

	// a missing hashed asset is a 404, never index.html
	w = serve(t, h, "GET", "assets/index-old.js")
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"))

	// HEAD: headers only
	w = serve(t, h, "HEAD", "assets/index-abc.js")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())
	assert.NotEmpty(t, w.Header().Get("Content-Length"))
}

func TestNotBuilt(t *testing.T) {
	h, err := spa.New(fstest.MapFS{".keep": {}})
	require.NoError(t, err)
	assert.False(t, h.Built())
	for _, p := range []string{"", "traces", "assets/index-abc.js"} {
		w := serve(t, h, "GET", p)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Contains(t, w.Body.String(), "console not built: run make console")
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	}
}

// FuzzServe: any path, Accept-Encoding and If-None-Match get a 200, 304 or
// 404 whose body, decompressed when it says gzip, is one of the app's files.
func FuzzServe(f *testing.F) {
	for _, s := range [][3]string{
		{"assets/index-abc.js", "gzip", ""}, {"traces/1", "br;q=1, gzip;q=0", `"x"`}, {"assets/../index.html", "*;q=0.5", ""},
		{"%2e%2e/etc", "GZIP;Q=0", ""}, {"assets/", ", ,;", "*"}, {"\x00", "gzip;q=0.000", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	h, err := spa.New(app)
	require.NoError(f, err)
	files := map[string]bool{}
	for _, file := range app {
		files[string(file.Data)] = true
	}
	f.Fuzz(func(t *testing.T, path, ae, inm string) {
		r := httptest.NewRequest("GET", "/console/", nil)
		r.Header.Set("Accept-Encoding", ae)
		r.Header.Set("If-None-Match", inm)
		w := httptest.NewRecorder()
		h.Serve(w, r, path)
		switch w.Code {
		case http.StatusNotModified:
			return
		case http.StatusNotFound:
			require.True(t, strings.HasPrefix(strings.TrimPrefix(pathClean(path), "/"), "assets/"), path)
			return
		case http.StatusOK:
		default:
			t.Fatalf("status %d for %q", w.Code, path)
		}
		body := w.Body.Bytes()
		if w.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			require.NoError(t, err)
			body, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		require.True(t, files[string(body)], "the body of %q is one of the files", path)
	})
}

func pathClean(p string) string { return gopath.Clean("/" + p) }

// TestContentSecurityPolicy: every page of the console, the app's client
// routes and the page shown when it was not built, comes with a policy
// under which no inline or foreign script runs and nothing frames it.
func TestContentSecurityPolicy(t *testing.T) {
	h, err := spa.New(app)
	require.NoError(t, err)
	unbuilt, err := spa.New(fstest.MapFS{".keep": {Data: nil}})
	require.NoError(t, err)
	for name, w := range map[string]*httptest.ResponseRecorder{
		"index": serve(t, h, "GET", ""), "client route": serve(t, h, "GET", "traces/abc"),
		"asset": serve(t, h, "GET", "assets/index-abc.js"), "not built": serve(t, unbuilt, "GET", ""),
	} {
		csp := w.Header().Get("Content-Security-Policy")
		require.NotEmpty(t, csp, name)
		directives := map[string]string{}
		for _, d := range strings.Split(csp, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(d), " ")
			directives[k] = v
		}
		assert.Equal(t, "'self'", directives["default-src"], name)
		assert.True(t, strings.HasPrefix(directives["script-src"], "'self'"), name)
		assert.NotContains(t, directives["script-src"], "unsafe-inline", name)
		assert.NotContains(t, directives["script-src"], "*", name)
		assert.Equal(t, "'self'", directives["connect-src"], name)
		assert.Equal(t, "'none'", directives["object-src"], name)
		assert.Equal(t, "'none'", directives["frame-ancestors"], name)
		assert.Equal(t, "'self'", directives["base-uri"], name)
	}
}
