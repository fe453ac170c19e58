package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// benchmarkRetrieveByEnvironment measures the poll an external runtime
// makes on every request: the revision production deploys under a key,
// over the real HTTP stack and PostgreSQL. inm sends the current ETag,
// so the answer is a 304.
func benchmarkRetrieveByEnvironment(b *testing.B, inm bool) {
	t := &testing.T{}
	s := newServer(t)
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "production"}})
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "bot", "data": m{"uri": "svc:builtin:chat:v0"}}}), "application")
	s.ok(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"id": app["id"]}, "environment_ref": m{"slug": "production"}})
	const body = `{"environment_ref":{"slug":"production"},"key":"bot.revision"}`
	tag := s.do(t, "POST", "/applications/revisions/retrieve", body).header.Get("ETag")
	want := http.StatusOK
	if inm {
		want = http.StatusNotModified
	}
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest("POST", s.url+"/applications/revisions/retrieve", strings.NewReader(body))
		setScope(req, s)
		if inm {
			req.Header.Set("If-None-Match", tag)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != want {
			b.Fatalf("retrieve: %v %v", err, res)
		}
		res.Body.Close()
	}
}

func BenchmarkRetrieveByEnvironment(b *testing.B)    { benchmarkRetrieveByEnvironment(b, false) }
func BenchmarkRetrieveByEnvironment304(b *testing.B) { benchmarkRetrieveByEnvironment(b, true) }
