package evaluations_test

// The evaluation records' use cases over the real pgstore and PostgreSQL:
// the closed-run guard, has_* flags, default queues, result upserts and
// scenario statuses, settle and the worker's claim. The HTTP tests
// (internal/httpapi) check the routes, envelopes and errors over them.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

type world struct {
	pool *pgxpool.Pool
	svc  *ev.Service
	sc   scope.Scope
	jobs *recJobs
}

// recJobs records the jobs the service publishes (the NATS side is lane
// eval-simple's and tested there).
type recJobs struct {
	mu   sync.Mutex
	jobs []evaluation.Job
}

func (r *recJobs) Publish(_ context.Context, j evaluation.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, j)
	return nil
}

var ctx = context.Background()

func TestService(t *testing.T) {
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log))
	for _, tc := range []struct {
		name string
		cfg  ev.Config
		run  func(*testing.T, *world)
	}{
		{"FlagsAreDerivedFromTheSteps", ev.Config{}, testFlags},
		{"AClosedRunRefusesEveryWrite", ev.Config{}, testClosedRun},
		{"DefaultQueueFollowsHumanSteps", ev.Config{}, testDefaultQueue},
		{"DefaultQueuesForAllRuns", ev.Config{DefaultQueuesForAllRuns: true}, testDefaultQueueAll},
		{"ResultsUpsertAndScenarioStatus", ev.Config{}, testResults},
		{"ScenarioCreateIsIdempotentInItsRun", ev.Config{}, testScenarioIdempotent},
		{"MetricsUpsertPerShape", ev.Config{}, testMetrics},
		{"QueriesFilterAndWindow", ev.Config{MaxLimit: 5}, testQueries},
		{"ClaimIsExclusive", ev.Config{}, testClaimConcurrent},
		{"ClaimRules", ev.Config{}, testClaimRules},
		{"SettleRules", ev.Config{}, testSettle},
		{"FailAndCancelEndARun", ev.Config{}, testEnd},
		{"CancelMarksUnrunCells", ev.Config{}, testCancelMarksUnrunCells},
		{"RefreshWithoutJobsIs503", ev.Config{}, testRefreshNoJobs},
		{"ADeadlockIsARetryable503", ev.Config{}, testDeadlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{pool: pool, sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}, jobs: &recJobs{}}
			w.svc = ev.NewService(pgstore.New(pool).Evaluations(), w.jobs, tc.cfg)
			tc.run(t, w)
		})
	}
}

func ref(id string) ev.Ref { return ev.Ref{ID: &id} }

// steps are testset → application → auto evaluator (+ a human one when human).
func steps(human bool) []ev.Step {
	s := []ev.Step{
		{Key: "testset-a", Type: ev.TypeInput, Origin: ev.OriginAuto, References: map[string]ev.Ref{"testset_revision": ref(uuid.NewString())}},
		{Key: "application-a", Type: ev.TypeInvocation, Origin: ev.OriginAuto, References: map[string]ev.Ref{"application_revision": ref(uuid.NewString())}},
		{Key: "evaluator-a", Type: ev.TypeAnnotation, Origin: ev.OriginAuto},
	}
	if human {
		s = append(s, ev.Step{Key: "evaluator-h", Type: ev.TypeAnnotation, Origin: ev.OriginHuman})
	}
	return s
}

func (w *world) run(t *testing.T, r ev.Run) ev.Run {
	t.Helper()
	out, err := w.svc.CreateRuns(ctx, w.sc, []ev.Run{r})
	require.NoError(t, err)
	return out[0]
}

func (w *world) scenarios(t *testing.T, run string, n int) []ev.Scenario {
	t.Helper()
	in := make([]ev.Scenario, n)
	for i := range in {
		in[i] = ev.Scenario{RunID: run}
	}
	out, err := w.svc.CreateScenarios(ctx, w.sc, in)
	require.NoError(t, err)
	return out
}

func status(t *testing.T, err error) int {
	t.Helper()
	require.Error(t, err)
	return httpx.Status(errs.KindOf(err))
}

func testFlags(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(true)}, Flags: ev.RunFlags{HasTraces: true, IsQueue: false}})
	f := r.Flags
	assert.True(t, f.HasTestsets && f.HasEvaluators && f.HasAuto && f.HasHuman && f.IsQueue)
	assert.False(t, f.HasTraces || f.HasQueries || f.HasCustom || f.HasTestcases, "sent has_* flags are ignored")
	assert.Equal(t, ev.Pending, r.Status)
	assert.Equal(t, ev.Version, r.Version)

	// An edit to direct traces → evaluators recomputes every flag.
	data := ev.RunData{Steps: []ev.Step{{Key: "traces", Type: ev.TypeInput}, {Key: "evaluator-c", Type: ev.TypeAnnotation, Origin: ev.OriginCustom}}}
	out, err := w.svc.EditRuns(ctx, w.sc, []ev.RunEdit{{ID: r.ID, Data: &data}})
	require.NoError(t, err)
	f = out[0].Flags
	assert.True(t, f.HasTraces && f.HasCustom && f.HasEvaluators)
	assert.False(t, f.HasTestsets || f.HasHuman || f.HasAuto || f.IsQueue)

	// references query
	rid := *r.Data.Steps[0].References["testset_revision"].ID
	other := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	page, err := w.svc.QueryRuns(ctx, w.sc, ev.Filter{References: json.RawMessage(`[{"id":"` + *other.Data.Steps[0].References["testset_revision"].ID + `"}]`)})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, other.ID, page.Items[0].ID)
	page, err = w.svc.QueryRuns(ctx, w.sc, ev.Filter{References: json.RawMessage(`[{"id":"` + rid + `"}]`)})
	require.NoError(t, err)
	assert.Empty(t, page.Items, "the edit replaced the run's references")

	// Bad steps are 422s naming the field.
	_, err = w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Steps: []ev.Step{{Key: "a", Type: "nope"}}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	assert.Contains(t, err.Error(), "type")
	_, err = w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Steps: []ev.Step{{Key: "a", Type: "input"}, {Key: "a", Type: "input"}}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	// A taken id is a 409.
	_, err = w.svc.CreateRuns(ctx, w.sc, []ev.Run{{ID: r.ID}})
	assert.Equal(t, http.StatusConflict, status(t, err))
}

func testClosedRun(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: ev.RunFlags{IsActive: true}})
	sc := w.scenarios(t, r.ID, 1)[0]
	q, err := w.svc.CreateQueues(ctx, w.sc, []ev.Queue{{RunID: r.ID}})
	require.NoError(t, err)
	m, err := w.svc.UpsertMetrics(ctx, w.sc, []ev.Metric{{RunID: r.ID}})
	require.NoError(t, err)
	res, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{{RunID: r.ID, ScenarioID: sc.ID, StepKey: "testset-a", Status: ev.Success}})
	require.NoError(t, err)
	closed, err := w.svc.SetClosed(ctx, w.sc, []uuid.UUID{uuid.MustParse(r.ID)}, true)
	require.NoError(t, err)
	require.True(t, closed[0].Flags.IsClosed)

	rid := uuid.MustParse(r.ID)
	name := "x"
	for label, write := range map[string]func() error{
		"edit run":        func() error { _, err := w.svc.EditRuns(ctx, w.sc, []ev.RunEdit{{ID: r.ID, Name: &name}}); return err },
		"delete run":      func() error { _, err := w.svc.DeleteRuns(ctx, w.sc, []uuid.UUID{rid}); return err },
		"create scenario": func() error { _, err := w.svc.CreateScenarios(ctx, w.sc, []ev.Scenario{{RunID: r.ID}}); return err },
		"edit scenario":   func() error { _, err := w.svc.EditScenarios(ctx, w.sc, []ev.Scenario{{ID: sc.ID}}); return err },
		"delete scenario": func() error {
			_, err := w.svc.DeleteScenarios(ctx, w.sc, []uuid.UUID{uuid.MustParse(sc.ID)})
			return err
		},
		"upsert result": func() error {
			_, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{{RunID: r.ID, ScenarioID: sc.ID, StepKey: "testset-a"}})
			return err
		},
		"delete result": func() error {
			_, err := w.svc.DeleteResults(ctx, w.sc, []uuid.UUID{uuid.MustParse(res[0].ID)})
			return err
		},
		"upsert metric": func() error { _, err := w.svc.UpsertMetrics(ctx, w.sc, []ev.Metric{{RunID: r.ID}}); return err },
		"delete metric": func() error {
			_, err := w.svc.DeleteMetrics(ctx, w.sc, []uuid.UUID{uuid.MustParse(m[0].ID)})
			return err
		},
		"create queue": func() error { _, err := w.svc.CreateQueues(ctx, w.sc, []ev.Queue{{RunID: r.ID}}); return err },
		"edit queue": func() error {
			_, err := w.svc.EditQueues(ctx, w.sc, []ev.QueueEdit{{ID: q[0].ID, Name: &name}})
			return err
		},
		"delete queue": func() error {
			_, err := w.svc.DeleteQueues(ctx, w.sc, []uuid.UUID{uuid.MustParse(q[0].ID)})
			return err
		},
		"refresh": func() error {
			_, err := w.svc.RefreshMetrics(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{rid}})
			return err
		},
	} {
		err := write()
		require.Error(t, err, label)
		e := errs.From(err)
		assert.Equal(t, errs.Conflict, e.Kind, label)
		assert.Equal(t, map[string]any{"message": "Cannot modify a closed evaluation.", "run_id": r.ID}, e.Detail, label)
	}
	// A claim on a closed run claims nothing.
	got, err := w.svc.Claim(ctx, w.sc, ev.ClaimRequest{RunID: r.ID, Worker: "w", LeaseSeconds: 30,
		Cells: []ev.ClaimCellIn{{ScenarioID: sc.ID, StepKey: "application-a"}}})
	require.NoError(t, err)
	assert.Empty(t, got)

	// Opened again, writes pass.
	_, err = w.svc.SetClosed(ctx, w.sc, []uuid.UUID{rid}, false)
	require.NoError(t, err)
	_, err = w.svc.EditRuns(ctx, w.sc, []ev.RunEdit{{ID: r.ID, Name: &name}})
	require.NoError(t, err)
}

func testDefaultQueue(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(true)}})
	rid := uuid.MustParse(r.ID)
	q, err := w.svc.RunDefaultQueue(ctx, w.sc, rid)
	require.NoError(t, err)
	require.NotNil(t, q, "a run with a human step gets a default queue")
	assert.True(t, q.Flags.IsDefault)
	assert.Nil(t, q.DeletedAt)

	// Filters on it are a 422; demoting or deleting it a 409.
	sid := []string{uuid.NewString()}
	_, err = w.svc.EditQueues(ctx, w.sc, []ev.QueueEdit{{ID: q.ID, Data: &ev.QueueData{ScenarioIDs: sid}}})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	no, yes := false, true
	_, err = w.svc.EditQueues(ctx, w.sc, []ev.QueueEdit{{ID: q.ID, Flags: &ev.QueueFlagsEdit{IsDefault: &no}}})
	assert.Equal(t, http.StatusConflict, status(t, err))
	seq, err := w.svc.EditQueues(ctx, w.sc, []ev.QueueEdit{{ID: q.ID, Flags: &ev.QueueFlagsEdit{IsSequential: &yes}}})
	require.NoError(t, err, "setting another flag keeps is_default")
	assert.True(t, seq[0].Flags.IsDefault && seq[0].Flags.IsSequential)
	_, err = w.svc.DeleteQueues(ctx, w.sc, []uuid.UUID{uuid.MustParse(q.ID)})
	assert.Equal(t, http.StatusConflict, status(t, err))
	// A second default queue is a 409.
	_, err = w.svc.CreateQueues(ctx, w.sc, []ev.Queue{{RunID: r.ID, Flags: ev.QueueFlags{IsDefault: true}}})
	assert.Equal(t, http.StatusConflict, status(t, err))

	// Without human steps the queue is archived, with them unarchived.
	auto := ev.RunData{Steps: steps(false)}
	out, err := w.svc.EditRuns(ctx, w.sc, []ev.RunEdit{{ID: r.ID, Data: &auto}})
	require.NoError(t, err)
	assert.False(t, out[0].Flags.IsQueue)
	q2, err := w.svc.RunDefaultQueue(ctx, w.sc, rid)
	require.NoError(t, err)
	assert.Nil(t, q2, "an archived default queue is none")
	page, err := w.svc.QueryQueues(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{rid}})
	require.NoError(t, err)
	assert.Empty(t, page.Items, "archived queues are left out of queries")
	page, err = w.svc.QueryQueues(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{rid}, IncludeArchived: true})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, q.ID, page.Items[0].ID)
	assert.NotNil(t, page.Items[0].DeletedAt, "archived")

	human := ev.RunData{Steps: steps(true)}
	_, err = w.svc.EditRuns(ctx, w.sc, []ev.RunEdit{{ID: r.ID, Data: &human}})
	require.NoError(t, err)
	q3, err := w.svc.RunDefaultQueue(ctx, w.sc, rid)
	require.NoError(t, err)
	assert.Equal(t, q.ID, q3.ID)
	assert.Nil(t, q3.DeletedAt, "unarchived")

	// A run without human steps has none.
	plain := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	q4, err := w.svc.RunDefaultQueue(ctx, w.sc, uuid.MustParse(plain.ID))
	require.NoError(t, err)
	assert.Nil(t, q4)
}

func testDefaultQueueAll(t *testing.T, w *world) {
	plain := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	q, err := w.svc.RunDefaultQueue(ctx, w.sc, uuid.MustParse(plain.ID))
	require.NoError(t, err)
	require.NotNil(t, q)
	assert.Nil(t, q.DeletedAt)
	assert.False(t, plain.Flags.IsQueue, "is_queue still needs a human step")
}

func cellStatus(t *testing.T, w *world, scen string) ev.Status {
	t.Helper()
	s, err := w.svc.Scenario(ctx, w.sc, uuid.MustParse(scen))
	require.NoError(t, err)
	return s.Status
}

func testResults(t *testing.T, w *world) {
	rep := 2
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false), Repeats: &rep}})
	sc := w.scenarios(t, r.ID, 2)
	s0 := sc[0].ID
	res := func(step string, i int, st ev.Status) ev.Result {
		return ev.Result{RunID: r.ID, ScenarioID: s0, StepKey: step, RepeatIdx: i, Status: st}
	}
	trace := "0X" + "ABCDEF0123456789ABCDEF0123456789"
	first, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{
		{RunID: r.ID, ScenarioID: s0, StepKey: "testset-a", Status: ev.Success, TraceID: &trace},
		res("testset-a", 1, ev.Success),
	})
	require.NoError(t, err)
	require.Len(t, first, 2)
	assert.Equal(t, "abcdef0123456789abcdef0123456789", *first[0].TraceID)
	assert.Equal(t, ev.Pending, cellStatus(t, w, s0), "cells are missing")

	// Upsert: the same cell keeps its id, its fields are replaced.
	again, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{res("testset-a", 0, ev.Running), res("testset-a", 0, ev.Success)})
	require.NoError(t, err)
	require.Len(t, again, 1, "the last of two results for one cell wins")
	assert.Equal(t, first[0].ID, again[0].ID)
	assert.Nil(t, again[0].TraceID)

	// Expected cells: inputs and evaluators at both repeats, the app at 0.
	_, err = w.svc.UpsertResults(ctx, w.sc, []ev.Result{res("application-a", 0, ev.Success), res("evaluator-a", 0, ev.Success), res("evaluator-a", 1, ev.Running)})
	require.NoError(t, err)
	assert.Equal(t, ev.Pending, cellStatus(t, w, s0))
	_, err = w.svc.UpsertResults(ctx, w.sc, []ev.Result{res("evaluator-a", 1, ev.Success)})
	require.NoError(t, err)
	assert.Equal(t, ev.Success, cellStatus(t, w, s0), "every expected cell is done")
	_, err = w.svc.UpsertResults(ctx, w.sc, []ev.Result{res("evaluator-a", 1, ev.Failure)})
	require.NoError(t, err)
	assert.Equal(t, ev.Errors, cellStatus(t, w, s0))
	assert.Equal(t, ev.Pending, cellStatus(t, w, sc[1].ID), "untouched")

	// A deleted cell makes the scenario pending again.
	all, err := w.svc.QueryResults(ctx, w.sc, ev.Filter{ScenarioIDs: []uuid.UUID{uuid.MustParse(s0)}, StepKeys: []string{"evaluator-a"}, RepeatIdxs: []int{1}})
	require.NoError(t, err)
	require.Len(t, all.Items, 1)
	_, err = w.svc.DeleteResults(ctx, w.sc, []uuid.UUID{uuid.MustParse(all.Items[0].ID)})
	require.NoError(t, err)
	assert.Equal(t, ev.Pending, cellStatus(t, w, s0))

	// 422s: unknown step, scenario of another run, bad trace id.
	badTrace := "not-a-trace"
	other := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	os := w.scenarios(t, other.ID, 1)[0]
	for _, bad := range []ev.Result{
		res("no\x00pe", 0, ev.Success), // an undeclared key is stored, unless malformed
		{RunID: r.ID, ScenarioID: os.ID, StepKey: "testset-a"},
		{RunID: r.ID, ScenarioID: s0, StepKey: "testset-a", TraceID: &badTrace},
		{RunID: r.ID, ScenarioID: s0, StepKey: "testset-a", Status: "done"},
		{RunID: uuid.NewString(), ScenarioID: s0, StepKey: "testset-a"},
	} {
		_, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{bad})
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err), "%+v", bad)
	}

	p, err := w.svc.Progress(ctx, w.sc, uuid.MustParse(r.ID))
	require.NoError(t, err)
	raw, _ := json.Marshal(p)
	assert.JSONEq(t, `{"run_id":"`+r.ID+`","status":"pending","scenarios":{"pending":2,"total":2},
		"results":{"success":4,"total":4,"expected":10}}`, string(raw))
}

func testScenarioIdempotent(t *testing.T, w *world) {
	r := w.run(t, ev.Run{})
	id := uuid.NewString()
	tags := json.RawMessage(`{"a":"b"}`)
	first, err := w.svc.CreateScenarios(ctx, w.sc, []ev.Scenario{{ID: id, RunID: r.ID, Tags: tags}})
	require.NoError(t, err)
	again, err := w.svc.CreateScenarios(ctx, w.sc, []ev.Scenario{{ID: id, RunID: r.ID, Status: ev.Success}})
	require.NoError(t, err)
	assert.Equal(t, first[0].ID, again[0].ID)
	assert.Equal(t, ev.Pending, again[0].Status, "the stored one, unchanged")
	assert.JSONEq(t, `{"a":"b"}`, string(again[0].Tags))
	other := w.run(t, ev.Run{})
	_, err = w.svc.CreateScenarios(ctx, w.sc, []ev.Scenario{{ID: id, RunID: other.ID}})
	assert.Equal(t, http.StatusConflict, status(t, err))

	// An edit is a full PUT.
	out, err := w.svc.EditScenarios(ctx, w.sc, []ev.Scenario{{ID: id, Status: ev.Running}})
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Nil(t, out[0].Tags)
	assert.Equal(t, r.ID, out[0].RunID)
}

func testMetrics(t *testing.T, w *world) {
	r := w.run(t, ev.Run{})
	sc := w.scenarios(t, r.ID, 1)[0]
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(m ev.Metric) ev.Metric {
		t.Helper()
		m.RunID = r.ID
		out, err := w.svc.UpsertMetrics(ctx, w.sc, []ev.Metric{m})
		require.NoError(t, err)
		require.Len(t, out, 1)
		return out[0]
	}
	g1 := put(ev.Metric{Data: json.RawMessage(`{"s":{"p":{"count":1}}}`)})
	g2 := put(ev.Metric{Data: json.RawMessage(`{"s":{"p":{"count":2}}}`)})
	assert.Equal(t, g1.ID, g2.ID, "one global metric per run")
	assert.JSONEq(t, `{"s":{"p":{"count":2}}}`, string(g2.Data))
	v1 := put(ev.Metric{ScenarioID: &sc.ID})
	v2 := put(ev.Metric{ScenarioID: &sc.ID, Status: ev.Failure})
	assert.Equal(t, v1.ID, v2.ID)
	assert.NotEqual(t, g1.ID, v1.ID)
	t1 := put(ev.Metric{Timestamp: &ts})
	ts2 := ts.Add(20 * time.Second) // same minute
	t2 := put(ev.Metric{Timestamp: &ts2})
	assert.Equal(t, t1.ID, t2.ID)
	assert.Equal(t, ts.Truncate(time.Minute), t2.Timestamp.UTC())

	_, err := w.svc.UpsertMetrics(ctx, w.sc, []ev.Metric{{RunID: r.ID, ScenarioID: &sc.ID, Timestamp: &ts}})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	bogus := uuid.NewString()
	_, err = w.svc.UpsertMetrics(ctx, w.sc, []ev.Metric{{RunID: r.ID}, {RunID: r.ID, ScenarioID: &bogus}})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	assert.Equal(t, []any{"body", "metrics", 1, "scenario_id"}, errs.From(err).Detail.([]errs.FieldError)[0].Loc, "names the culprit")

	page, err := w.svc.QueryMetrics(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{uuid.MustParse(r.ID)}})
	require.NoError(t, err)
	assert.Len(t, page.Items, 3)
	page, err = w.svc.QueryMetrics(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{uuid.MustParse(r.ID)}, Timestamps: []time.Time{ts.Truncate(time.Minute)}})
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)

	// refresh publishes one metrics job per run
	_, err = w.svc.RefreshMetrics(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{uuid.MustParse(r.ID), uuid.MustParse(r.ID)}})
	require.NoError(t, err)
	require.Len(t, w.jobs.jobs, 1)
	assert.Equal(t, evaluation.KindMetrics, w.jobs.jobs[0].Kind)
	assert.Equal(t, r.ID, w.jobs.jobs[0].RunID)
	assert.Equal(t, w.sc.ProjectID.String(), w.jobs.jobs[0].ProjectID)
}

func testQueries(t *testing.T, w *world) {
	var ids []string
	for i := 0; i < 7; i++ {
		tags := json.RawMessage(`{"n":"odd"}`)
		if i%2 == 0 {
			tags = json.RawMessage(`{"n":"even"}`)
		}
		st := ev.Pending
		if i < 2 {
			st = ev.Success
		}
		ids = append(ids, w.run(t, ev.Run{Tags: tags, Status: st, Flags: ev.RunFlags{IsLive: i == 3}}).ID)
	}
	// Bounded: no limit asked → MaxLimit (5), with the windowing to resume.
	page, err := w.svc.QueryRuns(ctx, w.sc, ev.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Items, 5)
	require.NotNil(t, page.Next)
	assert.Equal(t, ids[6], page.Items[0].ID, "newest first")
	rest, err := w.svc.QueryRuns(ctx, w.sc, ev.Filter{Windowing: page.Next})
	require.NoError(t, err)
	require.Len(t, rest.Items, 2)
	assert.Equal(t, ids[0], rest.Items[1].ID)
	assert.Nil(t, rest.Next)
	asc := "ascending"
	two := 2
	page, err = w.svc.QueryRuns(ctx, w.sc, ev.Filter{Windowing: &versioned.Windowing{Order: &asc, Limit: &two}})
	require.NoError(t, err)
	assert.Equal(t, []string{ids[0], ids[1]}, []string{page.Items[0].ID, page.Items[1].ID})

	page, err = w.svc.QueryRuns(ctx, w.sc, ev.Filter{Tags: json.RawMessage(`{"n":"even"}`), Statuses: []ev.Status{ev.Pending}})
	require.NoError(t, err)
	assert.Len(t, page.Items, 3) // 2, 4, 6
	page, err = w.svc.QueryRuns(ctx, w.sc, ev.Filter{Flags: json.RawMessage(`{"is_live":true}`)})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, ids[3], page.Items[0].ID)
	page, err = w.svc.QueryRuns(ctx, w.sc, ev.Filter{IDs: []uuid.UUID{uuid.MustParse(ids[1]), uuid.MustParse(ids[2])}})
	require.NoError(t, err)
	assert.Len(t, page.Items, 2)

	// Another project sees nothing.
	other := scope.Scope{ProjectID: uuid.New()}
	page, err = w.svc.QueryRuns(ctx, other, ev.Filter{})
	require.NoError(t, err)
	assert.Empty(t, page.Items)
	got, err := w.svc.Run(ctx, other, uuid.MustParse(ids[0]))
	require.NoError(t, err)
	assert.Nil(t, got)
}

func claimAll(t *testing.T, w *world, run string, scen []ev.Scenario, worker string, extra func(*ev.ClaimRequest)) []ev.Result {
	t.Helper()
	req := ev.ClaimRequest{RunID: run, Worker: worker, LeaseSeconds: 60}
	for _, s := range scen {
		req.Cells = append(req.Cells, ev.ClaimCellIn{ScenarioID: s.ID, StepKey: "application-a"}, ev.ClaimCellIn{ScenarioID: s.ID, StepKey: "evaluator-a"})
	}
	if extra != nil {
		extra(&req)
	}
	got, err := w.svc.Claim(ctx, w.sc, req)
	require.NoError(t, err)
	return got
}

func testClaimConcurrent(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: ev.RunFlags{IsActive: true}})
	scen := w.scenarios(t, r.ID, 50)
	const workers = 4
	claimed := make([][]ev.Result, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each worker asks for every cell, in its own order
			mine := append([]ev.Scenario{}, scen...)
			if i%2 == 1 {
				for a, b := 0, len(mine)-1; a < b; a, b = a+1, b-1 {
					mine[a], mine[b] = mine[b], mine[a]
				}
			}
			claimed[i] = claimAll(t, w, r.ID, mine, "w"+string(rune('0'+i)), nil)
		}()
	}
	wg.Wait()
	seen := map[string]string{}
	total := 0
	for i, rs := range claimed {
		for _, x := range rs {
			k := x.ScenarioID + "/" + x.StepKey
			if prev, dup := seen[k]; dup {
				t.Fatalf("cell %s claimed by %s and w%d", k, prev, i)
			}
			seen[k] = "w" + string(rune('0'+i))
			total++
			var meta struct {
				Claim struct{ Worker string } `json:"claim"`
			}
			require.NoError(t, json.Unmarshal(x.Meta, &meta))
			assert.Equal(t, seen[k], meta.Claim.Worker)
			assert.Equal(t, ev.Running, x.Status)
		}
	}
	assert.Equal(t, 100, total, "every cell claimed exactly once")

	// Every lease expires; the workers race to take the cells over: still
	// exactly one owner per cell (the WHERE is checked on the row as the
	// winner left it).
	_, err := w.pool.Exec(ctx, `UPDATE evaluation_results SET claim_until = now() - interval '1 second' WHERE run_id = $1`, r.ID)
	require.NoError(t, err)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claimed[i] = claimAll(t, w, r.ID, scen, "v"+string(rune('0'+i)), nil)
		}()
	}
	wg.Wait()
	again := map[string]bool{}
	for _, rs := range claimed {
		for _, x := range rs {
			k := x.ScenarioID + "/" + x.StepKey
			require.False(t, again[k], "expired cell %s taken over twice", k)
			again[k] = true
		}
	}
	assert.Len(t, again, 100)
}

func testClaimRules(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: ev.RunFlags{IsActive: true}})
	scen := w.scenarios(t, r.ID, 1)
	first := claimAll(t, w, r.ID, scen, "a", nil)
	require.Len(t, first, 2)
	assert.Empty(t, claimAll(t, w, r.ID, scen, "b", nil), "running with a live claim")
	// done cells are not claimed again, unless asked by status or overwrite
	_, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{{RunID: r.ID, ScenarioID: scen[0].ID, StepKey: "application-a", Status: ev.Success},
		{RunID: r.ID, ScenarioID: scen[0].ID, StepKey: "evaluator-a", Status: ev.Failure}})
	require.NoError(t, err)
	assert.Empty(t, claimAll(t, w, r.ID, scen, "b", nil))
	got := claimAll(t, w, r.ID, scen, "b", func(c *ev.ClaimRequest) { c.Statuses = []ev.Status{ev.Failure} })
	require.Len(t, got, 1)
	assert.Equal(t, "evaluator-a", got[0].StepKey)
	got = claimAll(t, w, r.ID, scen, "c", func(c *ev.ClaimRequest) { c.Overwrite = true })
	assert.Len(t, got, 2)
	// an expired claim is taken over
	_, err = w.pool.Exec(ctx, `UPDATE evaluation_results SET claim_until = now() - interval '1 second' WHERE run_id = $1 AND step_key = 'application-a'`, r.ID)
	require.NoError(t, err)
	got = claimAll(t, w, r.ID, scen, "d", nil)
	require.Len(t, got, 1)
	assert.Equal(t, "application-a", got[0].StepKey)
	// an unknown scenario is skipped; an inactive run claims nothing
	assert.Empty(t, claimAll(t, w, r.ID, []ev.Scenario{{ID: uuid.NewString()}}, "e", nil))
	inactive := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	assert.Empty(t, claimAll(t, w, inactive.ID, w.scenarios(t, inactive.ID, 1), "e", nil))
	// bad requests are 422s
	_, err = w.svc.Claim(ctx, w.sc, ev.ClaimRequest{RunID: r.ID, Worker: "", LeaseSeconds: 1})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	_, err = w.svc.Claim(ctx, w.sc, ev.ClaimRequest{RunID: r.ID, Worker: "x", LeaseSeconds: 0})
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
}

func testSettle(t *testing.T, w *world) {
	done := func(r ev.Run, s ev.Scenario, step string, st ev.Status) {
		t.Helper()
		_, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{{RunID: r.ID, ScenarioID: s.ID, StepKey: step, Status: st}})
		require.NoError(t, err)
	}
	settle := func(r ev.Run) *ev.Run {
		t.Helper()
		out, prog, err := w.svc.Settle(ctx, w.sc, uuid.MustParse(r.ID))
		require.NoError(t, err)
		require.NotNil(t, prog)
		return out
	}
	active := ev.RunFlags{IsActive: true}

	// executable cells left → running; all done → success, inactive
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: active, Status: ev.Running})
	s := w.scenarios(t, r.ID, 1)[0]
	done(r, s, "testset-a", ev.Success)
	got := settle(r)
	assert.Equal(t, ev.Running, got.Status)
	assert.True(t, got.Flags.IsActive)
	done(r, s, "application-a", ev.Success)
	done(r, s, "evaluator-a", ev.Success)
	got = settle(r)
	assert.Equal(t, ev.Success, got.Status)
	assert.False(t, got.Flags.IsActive)

	// an errored scenario → errors
	r = w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: active, Status: ev.Running})
	s = w.scenarios(t, r.ID, 2)[0]
	done(r, s, "application-a", ev.Failure)
	assert.Equal(t, ev.Errors, settle(r).Status)

	// only human cells left: success for a plain run…
	r = w.run(t, ev.Run{Data: ev.RunData{Steps: []ev.Step{{Key: "traces", Type: ev.TypeInput}, {Key: "evaluator-h", Type: ev.TypeAnnotation, Origin: ev.OriginHuman}}},
		Flags: active, Status: ev.Running})
	require.True(t, r.Flags.IsQueue, "a human step makes it a queue run")
	s = w.scenarios(t, r.ID, 1)[0]
	done(r, s, "traces", ev.Success)
	got = settle(r)
	assert.Equal(t, ev.Running, got.Status, "a queue run stays running while a scenario is pending")
	done(r, s, "evaluator-h", ev.Success)
	assert.Equal(t, ev.Success, settle(r).Status)

	r = w.run(t, ev.Run{Data: ev.RunData{Steps: []ev.Step{{Key: "traces", Type: ev.TypeInput}, {Key: "evaluator-c", Type: ev.TypeAnnotation, Origin: ev.OriginCustom}}},
		Flags: active, Status: ev.Running})
	s = w.scenarios(t, r.ID, 1)[0]
	done(r, s, "traces", ev.Success)
	assert.Equal(t, ev.Success, settle(r).Status, "custom cells are the SDK's: nothing executable is left")

	// live runs stay running and active; cancelled and failure are kept
	r = w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: ev.RunFlags{IsActive: true, IsLive: true}, Status: ev.Running})
	got = settle(r)
	assert.Equal(t, ev.Running, got.Status)
	assert.True(t, got.Flags.IsActive)
	r = w.run(t, ev.Run{Status: ev.Cancelled})
	assert.Equal(t, ev.Cancelled, settle(r).Status)

	// fail records the error
	r = w.run(t, ev.Run{Flags: active, Status: ev.Running, Meta: json.RawMessage(`{"k":"v"}`)})
	f, err := w.svc.Fail(ctx, w.sc, uuid.MustParse(r.ID), json.RawMessage(`"boom"`))
	require.NoError(t, err)
	assert.Equal(t, ev.Failure, f.Status)
	assert.False(t, f.Flags.IsActive)
	assert.JSONEq(t, `{"k":"v","error":"boom"}`, string(f.Meta))
	assert.Equal(t, ev.Failure, settle(r).Status)
	// empty run → success
	r = w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: active, Status: ev.Running})
	assert.Equal(t, ev.Success, settle(r).Status)
	_, _, err = w.svc.Settle(ctx, w.sc, uuid.New())
	assert.Equal(t, http.StatusNotFound, status(t, err))
}

// testEnd pins how the worker ends a run, by Fail (a crash) or Cancel (a
// budget reached): the reason goes under meta (error, stop), the run turns
// inactive, and the status turns failure or cancelled unless the run is
// closed (the closer's status stands) or, for a cancel, already final.
func testEnd(t *testing.T, w *world) {
	active := ev.RunFlags{IsActive: true}
	end := func(r ev.Run, cancel bool, reason string) (*ev.Run, error) {
		t.Helper()
		if cancel {
			return w.svc.Cancel(ctx, w.sc, uuid.MustParse(r.ID), json.RawMessage(reason))
		}
		return w.svc.Fail(ctx, w.sc, uuid.MustParse(r.ID), json.RawMessage(reason))
	}
	meta := func(r *ev.Run) map[string]json.RawMessage {
		t.Helper()
		m := map[string]json.RawMessage{}
		require.NoError(t, json.Unmarshal(r.Meta, &m))
		return m
	}

	r := w.run(t, ev.Run{Flags: active, Status: ev.Running, Meta: json.RawMessage(`{"k":"v"}`)})
	c, err := end(r, true, `{"type":"budget","message":"over"}`)
	require.NoError(t, err)
	assert.Equal(t, ev.Cancelled, c.Status)
	assert.False(t, c.Flags.IsActive)
	assert.JSONEq(t, `{"k":"v","stop":{"type":"budget","message":"over"}}`, string(c.Meta))

	// A null reason: a fail still records that the job failed (error:
	// null), a cancel records no stop.
	r = w.run(t, ev.Run{Flags: active, Status: ev.Running})
	f, err := end(r, false, `null`)
	require.NoError(t, err)
	assert.Equal(t, ev.Failure, f.Status)
	assert.Equal(t, map[string]json.RawMessage{"error": json.RawMessage(`null`)}, meta(f))
	r = w.run(t, ev.Run{Flags: active, Status: ev.Running})
	c, err = end(r, true, `null`)
	require.NoError(t, err)
	assert.Equal(t, ev.Cancelled, c.Status)
	assert.NotContains(t, meta(c), "stop")

	// A finished run: a cancel leaves its status, a late crash fails it.
	r = w.run(t, ev.Run{Flags: active, Status: ev.Success})
	c, err = end(r, true, `{"type":"budget"}`)
	require.NoError(t, err)
	assert.Equal(t, ev.Success, c.Status)
	assert.False(t, c.Flags.IsActive)
	assert.JSONEq(t, `{"type":"budget"}`, string(meta(c)["stop"]))
	f, err = end(r, false, `"late"`)
	require.NoError(t, err)
	assert.Equal(t, ev.Failure, f.Status)

	// A closed run keeps the closer's status either way.
	for _, cancel := range []bool{true, false} {
		r = w.run(t, ev.Run{Flags: active, Status: ev.Running})
		_, err = w.svc.Close(ctx, w.sc, []uuid.UUID{uuid.MustParse(r.ID)}, true, nil)
		require.NoError(t, err)
		got, err := end(r, cancel, `"why"`)
		require.NoError(t, err)
		assert.Equal(t, ev.Running, got.Status, "cancel=%v", cancel)
		assert.False(t, got.Flags.IsActive)
		assert.Len(t, meta(got), 1)
	}

	// Each reason has its bound: 64 KiB for a stop, 1 MiB for an error,
	// past which it is a 422 naming its field.
	r = w.run(t, ev.Run{Flags: active, Status: ev.Running})
	over := func(n int) string { return `"` + strings.Repeat("x", n-1) + `"` }
	_, err = end(r, true, over(1<<16+1))
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	assert.Equal(t, []any{"body", "stop"}, errs.From(err).Detail.([]errs.FieldError)[0].Loc)
	_, err = end(r, false, over(1<<20+1))
	assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	assert.Equal(t, []any{"body", "error"}, errs.From(err).Detail.([]errs.FieldError)[0].Loc)
	f, err = end(r, false, over(1<<16+1))
	require.NoError(t, err, "an error may be larger than a stop")
	assert.Equal(t, ev.Failure, f.Status)

	_, err = w.svc.Cancel(ctx, w.sc, uuid.New(), nil)
	assert.Equal(t, http.StatusNotFound, status(t, err))
	_, err = w.svc.Fail(ctx, w.sc, uuid.New(), nil)
	assert.Equal(t, http.StatusNotFound, status(t, err))
}

func testRefreshNoJobs(t *testing.T, w *world) {
	svc := ev.NewService(pgstore.New(w.pool).Evaluations(), nil, ev.Config{})
	r, err := svc.CreateRuns(ctx, w.sc, []ev.Run{{}})
	require.NoError(t, err)
	_, err = svc.RefreshMetrics(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{uuid.MustParse(r[0].ID)}})
	assert.Equal(t, http.StatusServiceUnavailable, status(t, err))
}

// testDeadlock makes the store's transaction the victim of a deadlock
// (it locks the run, then waits on a scenario another transaction holds,
// which then waits on the run) and expects a 503 to retry, not a 500.
func testDeadlock(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}})
	s := w.scenarios(t, r.ID, 1)[0]
	rid := uuid.MustParse(r.ID)
	other, err := w.pool.Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx) //nolint:errcheck // after the test's own commit or the deadlock
	_, err = other.Exec(ctx, `SELECT 1 FROM evaluation_scenarios WHERE project_id = $1 AND id = $2 FOR UPDATE`, w.sc.ProjectID, s.ID)
	require.NoError(t, err)
	locked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- pgstore.New(w.pool).Evaluations().InTx(ctx, func(st ev.Store) error {
			if _, err := st.LockRuns(ctx, w.sc.ProjectID, []uuid.UUID{rid}, true); err != nil {
				return err
			}
			close(locked)
			_, err := st.UpdateScenarios(ctx, w.sc.ProjectID, []ev.Scenario{{ID: s.ID, RunID: r.ID, Status: ev.Running}})
			return err
		})
	}()
	<-locked
	time.Sleep(200 * time.Millisecond) // the store's transaction waits first, so its deadlock check fires first
	_, err = other.Exec(ctx, `SELECT 1 FROM evaluation_runs WHERE project_id = $1 AND id = $2 FOR UPDATE`, w.sc.ProjectID, rid)
	require.NoError(t, err, "the other transaction gets the run once the store's is rolled back")
	err = <-done
	assert.Equal(t, http.StatusServiceUnavailable, status(t, err))
	assert.Equal(t, "evaluations.retry", errs.From(err).Code)
}
