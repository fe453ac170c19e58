package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/modelcalls"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/migrations"
)

// TestModelCallCacheRoutes: the runtime's model-call cache on PostgreSQL
// answers a stored key in its project only, until its time to live is
// over; bad keys, answers and times to live are 4xx naming the field; only
// the runtime's token reaches the routes; a run's provider wait shows in
// its progress until it is over.
func TestModelCallCacheRoutes(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log))
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	store := pgstore.New(pool)
	calls := &modelcalls.Service{Store: store.ModelCalls(), Now: clock}
	evs := evaluations.NewService(store.Evaluations(), nil, evaluations.Config{})
	evs.SetWaits(func(ctx context.Context, project, run uuid.UUID) ([]evaluations.ProviderWait, error) {
		ws, err := calls.Waits(ctx, project, run)
		out := make([]evaluations.ProviderWait, len(ws))
		for i, w := range ws {
			out[i] = evaluations.ProviderWait{Provider: w.Provider, Until: w.Until}
		}
		return out, err
	})
	srv := httpx.NewServer(httpx.Config{BodyLimit: "8M"}, log, "registry")
	srv.Echo.Use(recordRoutes)
	httpapi.RegisterCallers(srv.Echo, httpx.Callers{"gateway": token, "runtime": runtimeToken}, httpapi.Services{Evaluations: evs, ModelCalls: calls})
	ts := httptest.NewServer(srv.Echo)
	t.Cleanup(ts.Close)
	s := &server{url: ts.URL, project: uuid.New(), user: uuid.New(), pool: pool}

	post := func(tok string, project uuid.UUID, path string, body any) (int, map[string]any) {
		t.Helper()
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, tok, scope.Scope{ProjectID: project, UserID: s.user})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	key := strings.Repeat("ab", 32)
	lookup := func(project uuid.UUID) map[string]any {
		t.Helper()
		status, out := post(runtimeToken, project, "/internal/evaluations/model-calls/lookup", m{"keys": []string{key}})
		require.Equal(t, http.StatusOK, status, "%v", out)
		entries, _ := out["entries"].(map[string]any)
		return entries
	}
	answer := m{"message": m{"role": "assistant", "content": "Paris"}, "model": "gpt-4o-mini", "usage": m{"prompt": 12, "completion": 1, "total": 13}}

	status, _ := post(token, s.project, "/internal/evaluations/model-calls/lookup", m{"keys": []string{key}})
	assert.Equal(t, http.StatusNotFound, status, "the gateway's token reached the cache")
	assert.Empty(t, lookup(s.project), "a miss")

	status, out := post(runtimeToken, s.project, "/internal/evaluations/model-calls/store", m{"entries": []m{{"key": key, "response": answer, "ttl_seconds": 60}}})
	require.Equal(t, http.StatusOK, status, "%v", out)
	got := lookup(s.project)
	require.Contains(t, got, key)
	assert.Equal(t, "Paris", got[key].(map[string]any)["message"].(map[string]any)["content"])
	assert.Empty(t, lookup(uuid.New()), "another project's answer is not served")

	advance(61 * time.Second)
	assert.Empty(t, lookup(s.project), "an answer past its time to live is not served")

	for _, bad := range []struct {
		path, field string
		body        any
	}{
		{"/internal/evaluations/model-calls/lookup", "keys", m{"keys": []string{"not-a-sha"}}},
		{"/internal/evaluations/model-calls/store", "key", m{"entries": []m{{"key": "x", "response": answer, "ttl_seconds": 60}}}},
		{"/internal/evaluations/model-calls/store", "response", m{"entries": []m{{"key": key, "response": "text", "ttl_seconds": 60}}}},
		{"/internal/evaluations/model-calls/store", "ttl_seconds", m{"entries": []m{{"key": key, "response": answer, "ttl_seconds": 0}}}},
	} {
		status, out := post(runtimeToken, s.project, bad.path, bad.body)
		assert.True(t, status >= 400 && status < 500, "%s %v: %d", bad.path, bad.body, status)
		raw, _ := json.Marshal(out)
		assert.Contains(t, string(raw), bad.field, "the error names the field")
	}

	// A run's wait on a provider's limit shows in its progress until it ends.
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true}, "status": "running"})["id"])
	progress := func() []any {
		t.Helper()
		w, _ := obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid+"/progress", nil), "progress")["waiting"].([]any)
		return w
	}
	assert.Empty(t, progress())
	status, out = post(runtimeToken, s.project, "/internal/evaluations/runs/"+rid+"/waits", m{"provider": "openai", "until": clock().Add(5 * time.Second)})
	require.Equal(t, http.StatusOK, status, "%v", out)
	w := progress()
	require.Len(t, w, 1)
	assert.Equal(t, "openai", w[0].(map[string]any)["provider"])
	advance(6 * time.Second)
	assert.Empty(t, progress(), "a wait that is over is not shown")
	status, _ = post(runtimeToken, s.project, "/internal/evaluations/runs/"+rid+"/waits", m{"provider": "openai", "until": clock().Add(time.Hour)})
	assert.True(t, status >= 400 && status < 500, "a wait an hour ahead is refused: %d", status)
}
