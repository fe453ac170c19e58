package simpleevals_test

// The simple evaluations and queues over the real records store, the
// families' services on PostgreSQL and a real JetStream server: every job
// a use case publishes is read back from the EVALS stream.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
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
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

// simpleWorld is one project on a fresh database, with the families'
// fixture, the simple use cases, and the EVALS stream they publish to.
type simpleWorld struct {
	*fixture
	store  *pgstore.Store
	svc    *evaluations.Service
	simple *simpleevals.Simple
	queues *simpleevals.SimpleQueues
	jobs   evaljobs.Publisher
	stream jetstream.Stream
	nats   *natstest.Server
	seen   uint64 // stream sequence read so far
}

func newSimpleWorld(t *testing.T) *simpleWorld {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log))
	store := pgstore.New(pool)
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	f := newFixture(t, versioned.NewService(store), sc)

	ns := natstest.New(t)
	cfg := natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}
	c, err := natsx.Connect(cfg, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	require.NoError(t, evaljobs.Ensure(ctx, c, evaljobs.Config{Replicas: 1, DedupWindow: time.Minute}))
	stream, err := c.JS.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)

	w := &simpleWorld{fixture: f, store: store, jobs: evaljobs.Publisher{P: natsx.NewPublisher(c, cfg)}, stream: stream, nats: ns}
	w.svc = evaluations.NewService(store.Evaluations(), w.jobs, evaluations.Config{})
	w.simple = simpleevals.NewSimple(w.svc, f.fam)
	w.queues = simpleevals.NewSimpleQueues(w.simple)
	return w
}

// newJobs returns the jobs stored on the stream since the last call.
func (w *simpleWorld) newJobs(t *testing.T) []evaluation.Job {
	t.Helper()
	ctx := context.Background()
	info, err := w.stream.Info(ctx)
	require.NoError(t, err)
	var out []evaluation.Job
	for seq := w.seen + 1; seq <= info.State.LastSeq; seq++ {
		m, err := w.stream.GetMsg(ctx, seq)
		require.NoError(t, err)
		j, err := evaluation.DecodeJob(m.Subject, m.Data)
		require.NoError(t, err)
		out = append(out, j)
	}
	w.seen = info.State.LastSeq
	return out
}

func (w *simpleWorld) input(t *testing.T, raw string) *simpleevals.SimpleInput {
	t.Helper()
	in, err := simpleevals.ParseSimple(json.RawMessage(raw), "body", "evaluation")
	require.NoError(t, err)
	return in
}

// statusOf is the HTTP status an error renders as.
func statusOf(err error) int { return httpx.Status(errs.KindOf(err)) }

func refsOf(ids ...uuid.UUID) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, `"`+id.String()+`":"auto"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// commitRows commits new rows on the testset of revision r.
func (w *simpleWorld) commitRows(t *testing.T, r *versioned.Revision, raw string) *versioned.Revision {
	t.Helper()
	var rs []testcases.Row
	require.NoError(t, json.Unmarshal([]byte(raw), &rs))
	next, err := w.fam.Testsets.Commit(context.Background(), w.sc, testsets.Commit{ArtifactID: r.ArtifactID, VariantID: &r.VariantID, HasData: true, Rows: rs})
	require.NoError(t, err)
	require.NotEqual(t, r.ID, next.ID)
	return next
}

// TestSimpleEvaluationPinsAndStarts: create pins every step, starts the
// run (active, running) and publishes exactly one run job; revisions
// committed afterwards change nothing of what the run names; fetch
// answers the steps as {revision_id: origin}.
func TestSimpleEvaluationPinsAndStarts(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	in := w.input(t, `{"name":"qa","data":{"testset_steps":["`+w.testset.ID.String()+`"],
		"application_steps":`+refsOf(w.app.ID)+`,"evaluator_steps":`+refsOf(w.exact.ID)+`,"repeats":2}}`)
	ev, err := w.simple.Create(ctx, w.sc, in)
	require.NoError(t, err)
	assert.Equal(t, evaluations.Running, ev.Data.Status)
	assert.True(t, ev.Flags.IsActive)
	assert.True(t, ev.Flags.HasTestsets && ev.Flags.HasEvaluators && ev.Flags.HasAuto)
	assert.JSONEq(t, `{"`+w.testset.ID.String()+`":"custom"}`, string(ev.Data.TestsetSteps))
	assert.JSONEq(t, refsOf(w.exact.ID), string(ev.Data.EvaluatorSteps))
	assert.Equal(t, 2, *ev.Data.Repeats)

	jobs := w.newJobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)
	assert.Equal(t, ev.ID, jobs[0].RunID)
	assert.Equal(t, w.sc.ProjectID.String(), jobs[0].ProjectID)
	assert.Equal(t, w.sc.UserID.String(), jobs[0].UserID)
	assert.True(t, strings.HasPrefix(jobs[0].ID, "run:"+ev.ID+":"), jobs[0].ID)

	// New revisions of the testset, the application and the evaluator.
	w.commitRows(t, w.testset, `[{"data":{"question":"new","correct_answer":"x"}}]`)
	_, err = w.fam.Workflows.Simple("application").Edit(ctx, w.sc, w.app.ArtifactID, versioned.Header{},
		json.RawMessage(`{"uri":"svc:builtin:completion:v0","parameters":{"prompt":{"messages":[{"role":"user","content":"changed"}]}}}`))
	require.NoError(t, err)
	_, err = w.fam.Workflows.Simple("evaluator").Edit(ctx, w.sc, w.exact.ArtifactID, versioned.Header{},
		json.RawMessage(`{"uri":"svc:builtin:auto_exact_match:v0","parameters":{"correct_answer_key":"other"}}`))
	require.NoError(t, err)

	got, err := w.simple.Fetch(ctx, w.sc, uuid.MustParse(ev.ID))
	require.NoError(t, err)
	assert.JSONEq(t, `{"`+w.testset.ID.String()+`":"custom"}`, string(got.Data.TestsetSteps), "still the pinned testset revision")
	assert.JSONEq(t, refsOf(w.app.ID), string(got.Data.ApplicationSteps))
	assert.JSONEq(t, refsOf(w.exact.ID), string(got.Data.EvaluatorSteps))
	run, err := w.svc.Run(ctx, w.sc, uuid.MustParse(ev.ID))
	require.NoError(t, err)
	for _, s := range run.Data.Steps {
		for k, ref := range s.References {
			if strings.HasSuffix(k, "_revision") {
				assert.Equal(t, "1", *ref.Version, "step %s pins version 1 of its %s", s.Key, k)
			}
		}
	}
}

// TestSimpleEvaluationSetupOutcomes: an unresolved step creates nothing;
// an unsupported topology answers the run failed, closed and inactive with
// the reason; a client-driven run starts without a job.
func TestSimpleEvaluationSetupOutcomes(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()

	_, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"testset_steps":["`+w.testset.ID.String()+`"],"evaluator_steps":["`+uuid.NewString()+`"]}}`))
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	p, err := w.svc.QueryRuns(ctx, w.sc, evaluations.Filter{})
	require.NoError(t, err)
	assert.Empty(t, p.Items, "a configuration that cannot be resolved creates no run")

	bad, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"testset_steps":["`+w.testset.ID.String()+`"],
		"query_steps":["`+w.allQuery.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
	require.NoError(t, err)
	assert.Equal(t, evaluations.Failure, bad.Data.Status)
	assert.True(t, bad.Flags.IsClosed)
	assert.False(t, bad.Flags.IsActive)
	assert.Contains(t, string(bad.Meta), "A query and a testset")

	client, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"status":"running","testset_steps":["`+w.testset.ID.String()+`"]}}`))
	require.NoError(t, err)
	assert.Equal(t, evaluations.Running, client.Data.Status)
	assert.True(t, client.Flags.IsActive)
	assert.Empty(t, w.newJobs(t), "neither the failed nor the client-driven run is handed to the workers")

	_, err = w.simple.Start(ctx, w.sc, uuid.MustParse(bad.ID))
	assert.Equal(t, http.StatusConflict, statusOf(err), "a closed run does not start")
	_, err = w.simple.Start(ctx, w.sc, uuid.New())
	assert.Equal(t, http.StatusNotFound, statusOf(err))
}

// TestSimpleEvaluationLifecycle: stop, close, the closed-run guard on
// every operation, open, start again (a second run job).
func TestSimpleEvaluationLifecycle(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	ev, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"testset_steps":["`+w.testset.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
	require.NoError(t, err)
	id := uuid.MustParse(ev.ID)
	w.newJobs(t)

	stopped, err := w.simple.Stop(ctx, w.sc, id)
	require.NoError(t, err)
	assert.False(t, stopped.Flags.IsActive)
	assert.Equal(t, evaluations.Cancelled, stopped.Data.Status)

	closed, err := w.simple.SetClosed(ctx, w.sc, id, true)
	require.NoError(t, err)
	assert.True(t, closed.Flags.IsClosed)
	empty := &simpleevals.SliceInput{}
	for name, call := range map[string]func() error{
		"start":   func() error { _, err := w.simple.Start(ctx, w.sc, id); return err },
		"stop":    func() error { _, err := w.simple.Stop(ctx, w.sc, id); return err },
		"edit":    func() error { _, err := w.simple.Edit(ctx, w.sc, id, w.input(t, `{"name":"x"}`)); return err },
		"process": func() error { return w.simple.Process(ctx, w.sc, id, empty) },
		"prune":   func() error { return w.simple.Prune(ctx, w.sc, id, empty) },
		"refresh": func() error { return w.simple.Refresh(ctx, w.sc, id, empty) },
		"scenarios/add": func() error {
			_, err := w.simple.AddScenarios(ctx, w.sc, id, 1, nil)
			return err
		},
		"repeats/set": func() error { _, err := w.simple.SetRepeats(ctx, w.sc, id, 2); return err },
		"delete":      func() error { _, err := w.simple.Delete(ctx, w.sc, id); return err },
	} {
		err := call()
		require.Error(t, err, name)
		assert.Equal(t, http.StatusConflict, statusOf(err), name)
		d, _ := errs.From(err).Detail.(map[string]any)
		assert.Equal(t, "Cannot modify a closed evaluation.", d["message"], name)
		assert.Equal(t, ev.ID, d["run_id"], name)
	}
	assert.Empty(t, w.newJobs(t))

	_, err = w.simple.SetClosed(ctx, w.sc, id, false)
	require.NoError(t, err)
	started, err := w.simple.Start(ctx, w.sc, id)
	require.NoError(t, err)
	assert.True(t, started.Flags.IsActive)
	assert.Equal(t, evaluations.Running, started.Data.Status)
	jobs := w.newJobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)

	edited, err := w.simple.Edit(ctx, w.sc, id, w.input(t, `{"name":"renamed","data":{"evaluator_steps":`+refsOf(w.exact.ID, w.schemaless.ID)+`}}`))
	require.NoError(t, err)
	assert.Equal(t, "renamed", *edited.Name)
	assert.JSONEq(t, refsOf(w.exact.ID, w.schemaless.ID), string(edited.Data.EvaluatorSteps))
	assert.JSONEq(t, `{"`+w.testset.ID.String()+`":"custom"}`, string(edited.Data.TestsetSteps), "steps not sent are kept")

	ok, err := w.simple.Delete(ctx, w.sc, id)
	require.NoError(t, err)
	assert.True(t, ok)
	got, err := w.simple.Fetch(ctx, w.sc, id)
	require.NoError(t, err)
	assert.Nil(t, got)
}

// TestSimpleEvaluationSlices: the shape and slice operations, each scoped
// to its own run, and the jobs process and refresh publish.
func TestSimpleEvaluationSlices(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	mk := func() (*simpleevals.SimpleEvaluation, uuid.UUID) {
		ev, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"status":"running","testset_steps":["`+w.testset.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
		require.NoError(t, err)
		return ev, uuid.MustParse(ev.ID)
	}
	ev, id := mk()
	_, otherID := mk()
	tsKey, evKey := "testset-"+w.testset.Slug, "evaluator-"+w.exact.Slug

	at := time.Date(2026, 5, 1, 10, 30, 45, 0, time.UTC)
	scens, err := w.simple.AddScenarios(ctx, w.sc, id, 3, &at)
	require.NoError(t, err)
	require.Len(t, scens, 3)
	assert.Equal(t, time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC), scens[0].Timestamp.UTC(), "floored to the minute")
	assert.Equal(t, 1, *scens[0].Interval)
	others, err := w.simple.AddScenarios(ctx, w.sc, otherID, 1, nil)
	require.NoError(t, err)
	_, err = w.simple.AddScenarios(ctx, w.sc, id, 0, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))

	cell := func(scen string, key string, st string) evaluations.Result {
		return evaluations.Result{ScenarioID: scen, StepKey: key, Status: evaluations.Status(st)}
	}
	res, err := w.simple.Populate(ctx, w.sc, id, &simpleevals.SliceInput{Results: []evaluations.Result{
		cell(scens[0].ID, tsKey, "success"), cell(scens[0].ID, evKey, "failure"),
		cell(scens[1].ID, tsKey, "success"), cell(scens[1].ID, evKey, "success"),
	}})
	require.NoError(t, err)
	assert.Len(t, res, 4)
	_, err = w.simple.Populate(ctx, w.sc, id, &simpleevals.SliceInput{Results: []evaluations.Result{cell(others[0].ID, tsKey, "success")}})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "a scenario of another run")
	assert.Contains(t, err.Error(), others[0].ID)
	_, err = w.simple.Populate(ctx, w.sc, id, &simpleevals.SliceInput{Results: []evaluations.Result{{RunID: otherID.String(), ScenarioID: scens[0].ID, StepKey: tsKey, Status: "success"}}})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "a result naming another run")

	probe, err := w.simple.Probe(ctx, w.sc, id, &simpleevals.SliceInput{Slice: simpleevals.Slice{ScenarioIDs: []uuid.UUID{uuid.MustParse(scens[0].ID)}}})
	require.NoError(t, err)
	assert.Len(t, probe, 2)
	probe, err = w.simple.Probe(ctx, w.sc, id, &simpleevals.SliceInput{Slice: simpleevals.Slice{StepKeys: []string{evKey}}})
	require.NoError(t, err)
	assert.Len(t, probe, 2)

	for name, sl := range map[string]simpleevals.Slice{
		"scenario of another run": {ScenarioIDs: []uuid.UUID{uuid.MustParse(others[0].ID)}},
		"unknown scenario":        {ScenarioIDs: []uuid.UUID{uuid.New()}},
		"unknown step":            {StepKeys: []string{"evaluator-nope"}},
		"repeat out of range":     {RepeatIdxs: []int{1}},
	} {
		err := w.simple.Process(ctx, w.sc, id, &simpleevals.SliceInput{Slice: sl})
		assert.Equal(t, http.StatusBadRequest, statusOf(err), name)
		_, err = w.simple.Probe(ctx, w.sc, id, &simpleevals.SliceInput{Slice: sl})
		assert.Equal(t, http.StatusBadRequest, statusOf(err), name)
	}
	assert.Empty(t, w.newJobs(t))

	// Re-run only the failed cells of the first scenario's evaluator.
	sl := simpleevals.Slice{ScenarioIDs: []uuid.UUID{uuid.MustParse(scens[0].ID)}, StepKeys: []string{evKey}}
	require.NoError(t, w.simple.Process(ctx, w.sc, id, &simpleevals.SliceInput{Slice: sl, Statuses: []evaluations.Status{"failure", "errors"}}))
	require.NoError(t, w.simple.Refresh(ctx, w.sc, id, &simpleevals.SliceInput{}))
	jobs := w.newJobs(t)
	require.Len(t, jobs, 2)
	assert.Equal(t, evaluation.KindProcess, jobs[0].Kind)
	assert.Equal(t, evaluation.Slice{ScenarioIDs: []string{scens[0].ID}, StepKeys: []string{evKey}}, jobs[0].Slice)
	assert.Equal(t, []string{"failure", "errors"}, jobs[0].Statuses)
	assert.False(t, jobs[0].Overwrite)
	assert.Equal(t, evaluation.KindMetrics, jobs[1].Kind)
	assert.Equal(t, ev.ID, jobs[1].RunID)

	require.NoError(t, w.simple.Prune(ctx, w.sc, id, &simpleevals.SliceInput{Slice: simpleevals.Slice{StepKeys: []string{evKey}}}))
	probe, err = w.simple.Probe(ctx, w.sc, id, &simpleevals.SliceInput{})
	require.NoError(t, err)
	assert.Len(t, probe, 2, "only the evaluator's cells were pruned")

	require.NoError(t, w.simple.RemoveScenarios(ctx, w.sc, id, []uuid.UUID{uuid.MustParse(scens[2].ID)}))
	err = w.simple.RemoveScenarios(ctx, w.sc, id, []uuid.UUID{uuid.MustParse(others[0].ID)})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "another run's scenario is not removed through this one")

	run, err := w.simple.AddSteps(ctx, w.sc, id, []evaluations.Step{{Key: "evaluator-extra", Type: "annotation", Origin: "human"}}, nil)
	require.NoError(t, err)
	assert.Len(t, run.Data.Steps, 3)
	assert.True(t, run.Flags.HasHuman)
	for name, st := range map[string]evaluations.Step{
		"existing key": {Key: evKey, Type: "annotation"},
		"empty key":    {Type: "annotation"},
		"bad type":     {Key: "k", Type: "judge"},
		"bad origin":   {Key: "k", Type: "annotation", Origin: "robot"},
	} {
		_, err = w.simple.AddSteps(ctx, w.sc, id, []evaluations.Step{st}, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err), name)
		fe := errs.From(err).Detail.([]errs.FieldError)
		assert.Equal(t, []any{"body", "steps", 0}, fe[0].Loc[:3], name)
	}
	run, err = w.simple.RemoveSteps(ctx, w.sc, id, []string{"evaluator-extra"})
	require.NoError(t, err)
	assert.Len(t, run.Data.Steps, 2)
	_, err = w.simple.RemoveSteps(ctx, w.sc, id, []string{"evaluator-extra"})
	assert.Equal(t, http.StatusBadRequest, statusOf(err))
	run, err = w.simple.SetRepeats(ctx, w.sc, id, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, *run.Data.Repeats)
	require.NoError(t, w.simple.Process(ctx, w.sc, id, &simpleevals.SliceInput{Slice: simpleevals.Slice{RepeatIdxs: []int{2}}, Overwrite: true}))
	jobs = w.newJobs(t)
	require.Len(t, jobs, 1)
	assert.True(t, jobs[0].Overwrite)
}

// TestLiveTicker: one window job per active live run per interval, with
// the id that lets several replicas publish it; inactive, closed and batch
// runs get none.
func TestLiveTicker(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	live := func() string {
		ev, err := w.simple.Create(ctx, w.sc, w.input(t, `{"flags":{"is_live":true},"data":{"query_steps":["`+w.liveQuery.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
		require.NoError(t, err)
		require.True(t, ev.Flags.IsActive)
		require.Equal(t, evaluations.Running, ev.Data.Status)
		return ev.ID
	}
	a, b, c := live(), live(), live()
	_, err := w.simple.Stop(ctx, w.sc, uuid.MustParse(b))
	require.NoError(t, err)
	_, err = w.simple.SetClosed(ctx, w.sc, uuid.MustParse(c), true)
	require.NoError(t, err)
	_, err = w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"testset_steps":["`+w.testset.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
	require.NoError(t, err)
	w.newJobs(t)

	// A live run over a query that does not keep to invocations is refused.
	_, err = w.simple.Create(ctx, w.sc, w.input(t, `{"flags":{"is_live":true},"data":{"query_steps":["`+w.allQuery.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))

	runs := w.store.Evaluations()
	t1 := &simpleevals.Ticker{Runs: runs, Jobs: w.jobs, Interval: time.Minute}
	t2 := &simpleevals.Ticker{Runs: runs, Jobs: w.jobs, Interval: time.Minute}
	now := time.Date(2026, 5, 1, 10, 31, 2, 0, time.UTC)
	require.NoError(t, t1.Tick(ctx, now))
	require.NoError(t, t2.Tick(ctx, now.Add(3*time.Second)), "a second replica in the same minute")
	jobs := w.newJobs(t)
	require.Len(t, jobs, 1, "stored once: %v", jobs)
	j := jobs[0]
	assert.Equal(t, evaluation.KindWindow, j.Kind)
	assert.Equal(t, a, j.RunID)
	assert.Equal(t, w.sc.UserID.String(), j.UserID, "executed on behalf of the run's creator")
	oldest, newest := time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC), time.Date(2026, 5, 1, 10, 31, 0, 0, time.UTC)
	assert.Equal(t, oldest, j.Oldest.UTC())
	assert.Equal(t, newest, j.Newest.UTC())
	assert.Equal(t, "window:"+a+":"+itoa64(oldest.Unix()), j.ID)

	// The running ticker, on a short interval, publishes a window per tick
	// (a second: window ids count in seconds).
	fast := &simpleevals.Ticker{Runs: runs, Jobs: w.jobs, Interval: time.Second}
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- fast.Run(tctx) }()
	var got []evaluation.Job
	require.Eventually(t, func() bool { got = append(got, w.newJobs(t)...); return len(got) >= 2 }, 5*time.Second, 50*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, a, got[0].RunID)
	assert.Equal(t, time.Second, got[1].Oldest.Sub(*got[0].Oldest), "consecutive windows")
	assert.NotEqual(t, got[0].ID, got[1].ID)
}

func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }

func (w *simpleWorld) queueInput(t *testing.T, raw string) *simpleevals.SimpleQueueInput {
	t.Helper()
	in, err := simpleevals.ParseSimpleQueue(json.RawMessage(raw), "body", "queue")
	require.NoError(t, err)
	return in
}

// TestSimpleQueues: the four kinds, the human evaluator rule, assignments
// per repeat and a user's scenarios, and adding traces or testcases to a
// queue of the matching kind only.
func TestSimpleQueues(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	annotator, other := uuid.New(), uuid.New()

	tq, err := w.queues.Create(ctx, w.sc, w.queueInput(t, `{"name":"review","data":{"kind":"traces",
		"evaluators":["`+w.schemaless.ID.String()+`"],"repeats":2,"assignments":[["`+annotator.String()+`"],[]]}}`))
	require.NoError(t, err)
	assert.Equal(t, "traces", tq.Data.Kind)
	assert.Equal(t, 2, tq.Data.Repeats)
	assert.Equal(t, [][]string{{annotator.String()}, {}}, tq.Data.Assignments)
	assert.JSONEq(t, `{"`+w.schemaless.ID.String()+`":"human"}`, string(tq.Data.Evaluators), "list-form evaluators are human in a queue")
	assert.True(t, tq.Flags.IsDefault, "without filters the queue is its run's default queue")
	assert.Equal(t, evaluations.Running, tq.Status)
	run, err := w.svc.Run(ctx, w.sc, uuid.MustParse(tq.RunID))
	require.NoError(t, err)
	assert.True(t, run.Flags.IsQueue && run.Flags.HasTraces && run.Flags.HasHuman && run.Flags.IsActive)
	assert.Empty(t, w.newJobs(t), "a traces queue waits for its traces")

	traceA, traceB := strings.Repeat("a", 32), strings.Repeat("b", 32)
	scens, err := w.queues.AddItems(ctx, w.sc, uuid.MustParse(tq.ID), simpleevals.QueueTraces, []string{traceA, traceB})
	require.NoError(t, err)
	require.Len(t, scens, 2)
	assert.Equal(t, evaluations.Pending, scens[0].Status, "the human cells are pending")
	res, err := w.svc.QueryResults(ctx, w.sc, evaluations.Filter{RunIDs: []uuid.UUID{uuid.MustParse(tq.RunID)}, StepKeys: []string{"traces"}})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	assert.Equal(t, evaluations.Success, res.Items[0].Status)
	traces := []string{*res.Items[0].TraceID, *res.Items[1].TraceID}
	assert.ElementsMatch(t, []string{traceA, traceB}, traces)
	human, err := w.svc.QueryResults(ctx, w.sc, evaluations.Filter{RunIDs: []uuid.UUID{uuid.MustParse(tq.RunID)}, Statuses: []evaluations.Status{"pending"}})
	require.NoError(t, err)
	assert.Len(t, human.Items, 4, "one pending cell per scenario and repeat")
	assert.Empty(t, w.newJobs(t), "no auto step: nothing for the workers")

	// Adding a trace again answers its scenario and keeps its cells.
	done := human.Items[0]
	done.Status = evaluations.Success
	_, err = w.svc.UpsertResults(ctx, w.sc, []evaluations.Result{done})
	require.NoError(t, err)
	again, err := w.queues.AddItems(ctx, w.sc, uuid.MustParse(tq.ID), simpleevals.QueueTraces, []string{traceA, traceB, strings.ToUpper(traceA)})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{scens[0].ID, scens[1].ID}, []string{again[0].ID, again[1].ID})
	kept, err := w.svc.Result(ctx, w.sc, uuid.MustParse(done.ID))
	require.NoError(t, err)
	assert.Equal(t, evaluations.Success, kept.Status, "the annotation done is not reset")
	p, err := w.svc.QueryScenarios(ctx, w.sc, evaluations.Filter{RunIDs: []uuid.UUID{uuid.MustParse(tq.RunID)}})
	require.NoError(t, err)
	assert.Len(t, p.Items, 2)

	_, err = w.queues.AddItems(ctx, w.sc, uuid.MustParse(tq.ID), simpleevals.QueueTestcases, []string{uuid.NewString()})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "testcases into a traces queue")
	_, err = w.queues.AddItems(ctx, w.sc, uuid.MustParse(tq.ID), simpleevals.QueueTraces, []string{"not-a-trace"})
	assert.Equal(t, http.StatusUnprocessableEntity, statusOf(err))
	_, err = w.queues.AddItems(ctx, w.sc, uuid.New(), simpleevals.QueueTraces, []string{traceA})
	assert.Equal(t, http.StatusNotFound, statusOf(err))

	mine, err := w.queues.Scenarios(ctx, w.sc, uuid.MustParse(tq.ID), &annotator, evaluations.Filter{})
	require.NoError(t, err)
	assert.Len(t, mine.Items, 2)
	theirs, err := w.queues.Scenarios(ctx, w.sc, uuid.MustParse(tq.ID), &other, evaluations.Filter{})
	require.NoError(t, err)
	assert.Empty(t, theirs.Items, "a user the queue does not assign sees nothing")

	// A testcases queue with an auto evaluator beside the human one, and
	// step keys: a queue of its own; adding testcases publishes a process job.
	cq, err := w.queues.Create(ctx, w.sc, w.queueInput(t, `{"data":{"kind":"testcases",
		"evaluators":{"`+w.schemaless.ID.String()+`":"human","`+w.exact.ID.String()+`":"auto"},
		"step_keys":["evaluator-`+w.schemaless.Slug+`"],"settings":{"batch_size":5}}}`))
	require.NoError(t, err)
	assert.False(t, cq.Flags.IsDefault)
	assert.Equal(t, []string{"evaluator-" + w.schemaless.Slug}, cq.Data.StepKeys)
	assert.Equal(t, 5, *cq.Data.Settings.BatchSize)
	tcID := w.fixtureTestcase(t)
	scens, err = w.queues.AddItems(ctx, w.sc, uuid.MustParse(cq.ID), simpleevals.QueueTestcases, []string{tcID})
	require.NoError(t, err)
	jobs := w.newJobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindProcess, jobs[0].Kind)
	assert.Equal(t, []string{scens[0].ID}, jobs[0].Slice.ScenarioIDs)
	_, err = w.queues.AddItems(ctx, w.sc, uuid.MustParse(cq.ID), simpleevals.QueueTraces, []string{traceA})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "traces into a testcases queue")

	// Testsets and queries queues are sourced by the workers: a run job.
	sq, err := w.queues.Create(ctx, w.sc, w.queueInput(t, `{"data":{"testsets":["`+w.testset.ID.String()+`"],"evaluators":["`+w.schemaless.ID.String()+`"]}}`))
	require.NoError(t, err)
	assert.Equal(t, "testsets", sq.Data.Kind)
	qq, err := w.queues.Create(ctx, w.sc, w.queueInput(t, `{"data":{"kind":"queries","queries":["`+w.allQuery.ID.String()+`"],"evaluators":["`+w.schemaless.ID.String()+`"]}}`))
	require.NoError(t, err)
	assert.Equal(t, "queries", qq.Data.Kind)
	jobs = w.newJobs(t)
	require.Len(t, jobs, 2)
	assert.Equal(t, []string{sq.RunID, qq.RunID}, []string{jobs[0].RunID, jobs[1].RunID})
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)
	_, err = w.queues.AddItems(ctx, w.sc, uuid.MustParse(sq.ID), simpleevals.QueueTestcases, []string{tcID})
	assert.Equal(t, http.StatusBadRequest, statusOf(err), "a testsets queue takes no direct testcases")

	list, _, err := w.queues.Query(ctx, w.sc, evaluations.Filter{})
	require.NoError(t, err)
	assert.Len(t, list, 5, "four simple queues, and the default queue of the run whose simple queue has step keys")
	got, err := w.queues.Fetch(ctx, w.sc, uuid.MustParse(cq.ID))
	require.NoError(t, err)
	assert.Equal(t, "testcases", got.Data.Kind)
	_, err = w.queues.Delete(ctx, w.sc, []uuid.UUID{uuid.MustParse(tq.ID)})
	assert.Equal(t, http.StatusConflict, statusOf(err), "a default queue is archived, not deleted")
	ids, err := w.queues.Delete(ctx, w.sc, []uuid.UUID{uuid.MustParse(cq.ID)})
	require.NoError(t, err)
	assert.Len(t, ids, 1)
}

func (w *simpleWorld) fixtureTestcase(t *testing.T) string {
	t.Helper()
	return w.testset.TestcaseIDs[0].String()
}

func TestParseSimpleQueueRefusals(t *testing.T) {
	ev := uuid.NewString()
	for name, tc := range map[string]struct{ raw, field string }{
		"no data":              {`{"name":"q"}`, "data"},
		"no kind":              {`{"data":{"evaluators":["` + ev + `"]}}`, "kind"},
		"bad kind":             {`{"data":{"kind":"spans","evaluators":["` + ev + `"]}}`, "kind"},
		"queries kind no list": {`{"data":{"kind":"queries","evaluators":["` + ev + `"]}}`, "queries"},
		"both sources":         {`{"data":{"queries":["` + ev + `"],"testsets":["` + uuid.NewString() + `"],"evaluators":["` + ev + `"]}}`, "testsets"},
		"no evaluators":        {`{"data":{"kind":"traces"}}`, "evaluators"},
		"only auto evaluators": {`{"data":{"kind":"traces","evaluators":{"` + ev + `":"auto"}}}`, "evaluators"},
		"too many assignments": {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"assignments":[[],[]]}}`, "assignments"},
		"bad assignee":         {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"assignments":[["x"]]}}`, "assignments"},
		"repeats zero":         {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"repeats":0}}`, "repeats"},
		"repeats string":       {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"repeats":"2"}}`, "repeats"},
		"batch size zero":      {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"settings":{"batch_size":0}}}`, "batch_size"},
		"negative offset":      {`{"data":{"kind":"traces","evaluators":["` + ev + `"],"settings":{"batch_offset":-1}}}`, "batch_offset"},
	} {
		_, err := simpleevals.ParseSimpleQueue(json.RawMessage(tc.raw), "body", "queue")
		require.Error(t, err, name)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), name)
		fe := errs.From(err).Detail.([]errs.FieldError)
		assert.Contains(t, fe[0].Loc, tc.field, name)
	}
}

func TestParseSimpleRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		raw string
		loc []any
	}{
		"not an object":   {`[]`, []any{"body", "evaluation"}},
		"name a number":   {`{"name":1}`, []any{"body", "evaluation", "name"}},
		"tags a list":     {`{"tags":[]}`, []any{"body", "evaluation", "tags"}},
		"bad status":      {`{"data":{"status":"done"}}`, []any{"body", "evaluation", "data", "status"}},
		"steps a string":  {`{"data":{"testset_steps":"x"}}`, []any{"body", "evaluation", "data", "testset_steps"}},
		"repeats zero":    {`{"data":{"repeats":0}}`, []any{"body", "evaluation", "data", "repeats"}},
		"repeats a float": {`{"data":{"repeats":1.5}}`, []any{"body", "evaluation", "data", "repeats"}},
		"batch size 0":    {`{"data":{"concurrency":{"batch_size":0}}}`, []any{"body", "evaluation", "data", "concurrency", "batch_size"}},
		"retries -1":      {`{"data":{"concurrency":{"max_retries":-1}}}`, []any{"body", "evaluation", "data", "concurrency", "max_retries"}},
		"is_live a str":   {`{"flags":{"is_live":"yes"}}`, []any{"body", "evaluation", "flags", "is_live"}},
	} {
		_, err := simpleevals.ParseSimple(json.RawMessage(tc.raw), "body", "evaluation")
		require.Error(t, err, name)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), name)
		fe := errs.From(err).Detail.([]errs.FieldError)
		assert.Equal(t, tc.loc, fe[0].Loc, name)
	}
}

// TestClassify: the supported topologies, and the reason for each shape
// the compatible platform does not plan.
func TestClassify(t *testing.T) {
	in := func(ref string) evaluations.Step {
		s := evaluations.Step{Key: "in-" + ref, Type: evaluations.TypeInput}
		if ref != "" {
			id := uuid.NewString()
			s.References = map[string]evaluations.Ref{ref: {ID: &id}}
		} else {
			s.Key = "traces"
		}
		return s
	}
	app := evaluations.Step{Key: "app", Type: evaluations.TypeInvocation}
	ev := evaluations.Step{Key: "ev", Type: evaluations.TypeAnnotation, Origin: "auto"}
	ts, q, direct := in("testset_revision"), in("query_revision"), in("")
	for _, tc := range []struct {
		name  string
		live  bool
		steps []evaluations.Step
		want  simpleevals.Topology
		why   string
	}{
		{"testset app evaluator", false, []evaluations.Step{ts, app, ev}, simpleevals.TopologyTestsetAppEvaluators, ""},
		{"testset app", false, []evaluations.Step{ts, app}, simpleevals.TopologyTestsetApp, ""},
		{"testset evaluator", false, []evaluations.Step{ts, ev}, simpleevals.TopologyTestsetEvaluators, ""},
		{"query evaluator", false, []evaluations.Step{q, ev}, simpleevals.TopologyQueryEvaluators, ""},
		{"live query evaluator", true, []evaluations.Step{q, ev}, simpleevals.TopologyLiveQuery, ""},
		{"direct evaluator", false, []evaluations.Step{direct, ev}, simpleevals.TopologyDirectEvaluators, ""},
		{"no source", false, []evaluations.Step{app, ev}, simpleevals.Unsupported, "no source"},
		{"query and testset", false, []evaluations.Step{q, ts, ev}, simpleevals.Unsupported, "query and a testset"},
		{"two apps", false, []evaluations.Step{ts, app, {Key: "app2", Type: evaluations.TypeInvocation}}, simpleevals.Unsupported, "Two or more"},
		{"live testset", true, []evaluations.Step{ts, ev}, simpleevals.Unsupported, "not a testset"},
		{"query app", false, []evaluations.Step{q, app, ev}, simpleevals.Unsupported, "application"},
		{"live without evaluator", true, []evaluations.Step{q}, simpleevals.Unsupported, "evaluator_steps"},
		{"testset alone", false, []evaluations.Step{ts}, simpleevals.Unsupported, "nothing to run"},
	} {
		r := &evaluations.Run{Flags: evaluations.RunFlags{IsLive: tc.live}, Data: evaluations.RunData{Steps: tc.steps}}
		got, why := simpleevals.Classify(r)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Contains(t, why, tc.why, tc.name)
	}
}

// TestStartWithoutNATS: when the run job cannot be stored the run is not
// left active; the 503 names it, and /start works once NATS is back.
func TestStartWithoutNATS(t *testing.T) {
	w := newSimpleWorld(t)
	ctx := context.Background()
	w.nats.Shutdown()
	_, err := w.simple.Create(ctx, w.sc, w.input(t, `{"data":{"testset_steps":["`+w.testset.ID.String()+`"],"evaluator_steps":`+refsOf(w.exact.ID)+`}}`))
	require.Error(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, statusOf(err))
	d, _ := errs.From(err).Detail.(map[string]any)
	id := uuid.MustParse(d["run_id"].(string))
	run, err := w.svc.Run(ctx, w.sc, id)
	require.NoError(t, err)
	assert.False(t, run.Flags.IsActive)
	assert.Equal(t, evaluations.Pending, run.Status)

	w.nats.Start()
	require.Eventually(t, func() bool {
		_, err := w.simple.Start(ctx, w.sc, id)
		return err == nil
	}, 15*time.Second, 200*time.Millisecond)
	// The job of the failed start may have been stored on reconnection
	// too (the client buffers while disconnected): at least the retry's.
	jobs := w.newJobs(t)
	require.NotEmpty(t, jobs)
	for _, j := range jobs {
		assert.Equal(t, evaluation.KindRun, j.Kind)
		assert.Equal(t, id.String(), j.RunID)
	}
}
