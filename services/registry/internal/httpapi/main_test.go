package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

const token = "test-internal-token"

// runtimeToken is the runtime's token, for the routes only the runtime may call.
const runtimeToken = "test-runtime-to-registry-token"

// server is the registry's real HTTP stack on a fresh database.
type server struct {
	url     string
	project uuid.UUID
	user    uuid.UUID
	tracing *fakeTracing     // records the queries /queries retrieve runs
	pool    *pgxpool.Pool    // the server's database, for tests that need a second connection
	jobs    *evalJobs        // the jobs the /evaluations routes published
	evals   jetstream.Stream // the EVALS stream the simple evaluations publish to (through NATS)
}

func newServer(t testing.TB, limits ...tcfile.Limits) *server {
	t.Helper()
	lim := tcfile.Limits{MaxRows: 100000, MaxBytes: 100 << 20}
	if len(limits) > 0 {
		lim = limits[0]
	}
	return newServerWith(t, lim)
}

// newServerWith is newServer with store options (the commit lock timeout).
func newServerWith(t testing.TB, lim tcfile.Limits, opts ...pgstore.Option) *server {
	t.Helper()
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", log))
	reg := versioned.NewService(pgstore.New(pool, opts...))
	srv := httpx.NewServer(httpx.Config{BodyLimit: "128M"}, log, "registry")
	tr := &fakeTracing{}
	jobs := &evalJobs{}
	srv.Echo.Use(recordRoutes)
	svcs, evals := withSimpleEvaluations(t, withEvaluations(withSecrets(withWorkflows(reg, httpapi.Services{Testsets: testsets.NewService(reg, lim)}, tr), pool), pool, jobs), pool)
	httpapi.RegisterCallers(srv.Echo, httpx.Callers{"gateway": token, "runtime": runtimeToken}, svcs)
	ts := httptest.NewServer(srv.Echo)
	t.Cleanup(ts.Close)
	return &server{url: ts.URL, project: uuid.New(), user: uuid.New(), tracing: tr, pool: pool, jobs: jobs, evals: evals}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), string(r.body))
	return m
}

func (s *server) send(t *testing.T, method, path string, body io.Reader, contentType string) resp {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	scope.Set(req.Header, token, scope.Scope{ProjectID: s.project, UserID: s.user})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// do sends body (a string is sent as is, anything else as JSON).
func (s *server) do(t *testing.T, method, path string, body any) resp {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	}
	return s.send(t, method, path, r, "application/json")
}

// ok sends and requires a 200, returning the decoded body.
func (s *server) ok(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	r := s.do(t, method, path, body)
	require.Equal(t, http.StatusOK, r.status, "%s %s: %s", method, path, r.body)
	return r.json(t)
}

// upload posts a multipart form with fields and a file part.
func (s *server) upload(t *testing.T, path string, fields map[string]string, fileName string, content []byte) resp {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, w.WriteField(k, v))
	}
	fw, err := w.CreateFormFile("file", fileName)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return s.send(t, "POST", path, &buf, w.FormDataContentType())
}

// obj and list walk decoded JSON.
func obj(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		require.True(t, ok, "no object at %q in %v", p, m)
		m = next
	}
	return m
}

func list(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	l, ok := m[key].([]any)
	require.True(t, ok, "no list at %q in %v", key, m)
	return l
}

func str(v any) string { s, _ := v.(string); return s }
