package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/evaljobs"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/migrations"
)

// TestRuntimeFanOutJobs: the runtime's NATS user may not publish
// evaluation jobs, so its worker hands the process jobs a run job fans out
// to the registry (POST /internal/evaluations/jobs), which publishes them
// on the real EVALS stream with the ids they carry: the same jobs sent
// again (a redelivered run job) are stored once. Only the runtime's token
// reaches the route; a job of another project, another user, another kind
// or an unknown run is refused with a 4xx naming the field.
func TestRuntimeFanOutJobs(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log))
	ns := natstest.New(t)
	cfg := natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}
	c, err := natsx.Connect(cfg, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	require.NoError(t, evaljobs.Ensure(ctx, c, evaljobs.Config{Replicas: 1, DedupWindow: time.Minute}))
	stream, err := c.JS.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)

	srv := httpx.NewServer(httpx.Config{BodyLimit: "8M"}, log, "registry")
	srv.Echo.Use(recordRoutes)
	evs := evaluations.NewService(pgstore.New(pool).Evaluations(), evaljobs.Publisher{P: natsx.NewPublisher(c, cfg)}, evaluations.Config{})
	httpapi.RegisterCallers(srv.Echo, httpx.Callers{"gateway": token, "runtime": runtimeToken}, httpapi.Services{Evaluations: evs})
	ts := httptest.NewServer(srv.Echo)
	t.Cleanup(ts.Close)
	s := &server{url: ts.URL, project: uuid.New(), user: uuid.New(), pool: pool}
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true}, "status": "running"})["id"])

	post := func(tok string, jobs []evaluation.Job) (int, string) {
		t.Helper()
		body, err := json.Marshal(map[string]any{"jobs": jobs})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/internal/evaluations/jobs", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, tok, scope.Scope{ProjectID: s.project, UserID: s.user})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	job := func(i int) evaluation.Job {
		return evaluation.Job{Kind: evaluation.KindProcess, ProjectID: s.project.String(), UserID: s.user.String(), RunID: rid,
			Slice: evaluation.Slice{ScenarioIDs: []string{uuid.NewString()}}, ID: "run:" + rid + "/process/" + string(rune('0'+i))}
	}
	stored := func() uint64 {
		info, err := stream.Info(ctx)
		require.NoError(t, err)
		return info.State.Msgs
	}

	status, body := post(token, []evaluation.Job{job(0)})
	assert.Equal(t, http.StatusNotFound, status, "the gateway's token published a job: %s", body)

	bad := job(0)
	bad.ProjectID = uuid.NewString()
	status, body = post(runtimeToken, []evaluation.Job{bad})
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "jobs[0].project_id")
	bad = job(0)
	bad.UserID = uuid.NewString()
	status, body = post(runtimeToken, []evaluation.Job{bad})
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "jobs[0].user_id")
	bad = job(0)
	bad.Kind = evaluation.KindRun
	status, body = post(runtimeToken, []evaluation.Job{bad})
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "jobs[0].kind")
	bad = job(0)
	bad.RunID = uuid.NewString()
	status, body = post(runtimeToken, []evaluation.Job{bad})
	assert.Equal(t, http.StatusNotFound, status, body)
	require.Zero(t, stored(), "a refused request published a job")

	jobs := []evaluation.Job{job(0), job(1)}
	status, body = post(runtimeToken, jobs)
	require.Equal(t, http.StatusOK, status, body)
	status, body = post(runtimeToken, jobs)
	require.Equal(t, http.StatusOK, status, body)
	require.EqualValues(t, 2, stored(), "the same jobs sent again are stored once")
	for seq := uint64(1); seq <= 2; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		require.NoError(t, err)
		got, err := evaluation.DecodeJob(msg.Subject, msg.Data)
		require.NoError(t, err)
		assert.Equal(t, jobs[seq-1], got)
		assert.Equal(t, jobs[seq-1].ID, msg.Header.Get("Nats-Msg-Id"))
	}
}
