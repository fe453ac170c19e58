package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
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

// TestErrorsBeforeAHandlerAreJSON checks the answers the registry gives
// before any handler logic runs (no route, wrong method, no internal token,
// a body over the limit with or without Content-Length, malformed JSON, a
// field of the wrong type, a malformed request line or header) on the
// registry's real server (httpx.Server.Serve, a 1K body limit): every one
// is a JSON error body, naming the field where there is one.
func TestErrorsBeforeAHandlerAreJSON(t *testing.T) {
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", log))
	reg := versioned.NewService(pgstore.New(pool))
	srv := httpx.NewServer(httpx.Config{BodyLimit: "1K", ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second}, log, "registry")
	httpapi.Register(srv.Echo, token, withWorkflows(reg, httpapi.Services{Testsets: testsets.NewService(reg, tcfile.Limits{MaxRows: 10, MaxBytes: 1 << 20})}, &fakeTracing{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	s := &server{url: "http://" + ln.Addr().String(), project: uuid.New(), user: uuid.New()}

	type detailOf = func(t *testing.T, body []byte)
	loc := func(want ...any) detailOf {
		return func(t *testing.T, body []byte) {
			var d struct {
				Detail []struct{ Loc []any } `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(body, &d), string(body))
			require.NotEmpty(t, d.Detail, string(body))
			assert.Equal(t, want, d.Detail[0].Loc)
		}
	}
	says := func(sub string) detailOf {
		return func(t *testing.T, body []byte) {
			var d struct{ Detail any }
			require.NoError(t, json.Unmarshal(body, &d), string(body))
			raw, _ := json.Marshal(d.Detail)
			assert.Contains(t, string(raw), sub)
		}
	}
	big := `{"testset":{"slug":"x","description":"` + strings.Repeat("d", 4096) + `"}}`
	for _, tc := range []struct {
		name, method, path string
		body               io.Reader
		noScope            bool
		status             int
		check              detailOf
	}{
		{"unknown route", "GET", "/nothing/here", nil, false, 404, says("Not Found")},
		{"wrong method", "DELETE", "/testsets/query", nil, false, 405, says("Method Not Allowed")},
		{"no internal token", "POST", "/testsets/query", strings.NewReader(`{}`), true, 401, says("Unauthorized")},
		{"body over the limit", "POST", "/testsets", strings.NewReader(big), false, 413, says("limit of 1K")},
		{"chunked body over the limit", "POST", "/testsets", io.MultiReader(strings.NewReader(big)), false, 413, says("limit of 1K")},
		{"malformed JSON", "POST", "/testsets", strings.NewReader(`{"testset":`), false, 400, says("malformed JSON body")},
		{"not an object", "POST", "/testsets", strings.NewReader(`[1]`), false, 400, says("malformed JSON body")},
		{"object of the wrong type", "POST", "/testsets", strings.NewReader(`{"testset":"str"}`), false, 422, loc("body", "testset")},
		{"string of the wrong type", "POST", "/testsets", strings.NewReader(`{"testset":{"slug":"x","name":5}}`), false, 422, loc("body", "testset", "name")},
		{"windowing of the wrong type", "POST", "/testsets/query", strings.NewReader(`{"windowing":{"limit":"ten"}}`), false, 422, loc("body", "windowing", "limit")},
		{"list of the wrong type", "POST", "/testsets/revisions/commit", strings.NewReader(`{"testset_revision":{"testset_id":"` + uuid.NewString() + `","testset_variant_id":"` + uuid.NewString() + `","data":{"testcases":"str"}}}`), false, 422, loc("body", "testset_revision", "data", "testcases")},
		{"path id not a UUID", "GET", "/testsets/not-a-uuid", nil, false, 422, loc("path", "id")},
		{"query parameter with NUL", "POST", "/testsets/query?name=%00", strings.NewReader(`{}`), false, 422, loc("query", "name")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.url+tc.path, tc.body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if !tc.noScope {
				scope.Set(req.Header, token, scope.Scope{ProjectID: s.project, UserID: s.user})
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, string(b))
			assert.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0])
			tc.check(t, b)
		})
	}

	t.Run("malformed request head", func(t *testing.T) {
		for name, raw := range map[string]string{
			"NUL in a header": "GET /testsets/x HTTP/1.1\r\nHost: r\r\nX-Assay-Project-Id: \x00\r\n\r\n",
			"CR in a header":  "GET /testsets/x HTTP/1.1\r\nHost: r\r\nX-Name: a\rb\r\n\r\n",
			"1 MB of headers": "GET /testsets/x HTTP/1.1\r\nHost: r\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 1100) + "\r\n",
			"garbage":         "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
		} {
			conn, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			go func() { _, _ = io.WriteString(conn, raw) }()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, name)
			b, _ := io.ReadAll(res.Body)
			conn.Close()
			assert.Contains(t, []int{400, 431}, res.StatusCode, name)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"), name)
			var d struct {
				Detail struct{ Message string } `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(b, &d), name+": "+string(b))
			assert.NotEmpty(t, d.Detail.Message, name)
		}
	})
}
