package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/registry/internal/evaljobs"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
)

// evalServer is the registry's HTTP stack with the simple evaluations and
// queues over a real JetStream server, whose EVALS stream the tests read.
type evalServer struct {
	*server
	stream jetstream.Stream
	seen   uint64
}

// withSimpleEvaluations adds the simple evaluations and queues to svcs,
// publishing to a real JetStream server, and returns its EVALS stream.
func withSimpleEvaluations(t testing.TB, svcs httpapi.Services, pool *pgxpool.Pool) (httpapi.Services, jetstream.Stream) {
	t.Helper()
	ctx := context.Background()
	ns := natstest.New(t)
	cfg := natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}
	c, err := natsx.Connect(cfg, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	require.NoError(t, evaljobs.Ensure(ctx, c, evaljobs.Config{Replicas: 1, DedupWindow: time.Minute}))
	stream, err := c.JS.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)
	evs := evaluations.NewService(pgstore.New(pool).Evaluations(), evaljobs.Publisher{P: natsx.NewPublisher(c, cfg)}, evaluations.Config{})
	simple := simpleevals.NewSimple(evs, simpleevals.Families{Testsets: svcs.Testsets, Workflows: svcs.Workflows, Queries: svcs.Queries})
	svcs.SimpleEvaluations, svcs.SimpleQueues = simple, simpleevals.NewSimpleQueues(simple)
	return svcs, stream
}

func newEvalServer(t *testing.T) *evalServer {
	t.Helper()
	s := newServer(t)
	return &evalServer{server: s, stream: s.evals}
}

// jobs returns the jobs stored since the last call.
func (s *evalServer) jobs(t *testing.T) []evaluation.Job {
	t.Helper()
	ctx := context.Background()
	info, err := s.stream.Info(ctx)
	require.NoError(t, err)
	var out []evaluation.Job
	for seq := s.seen + 1; seq <= info.State.LastSeq; seq++ {
		msg, err := s.stream.GetMsg(ctx, seq)
		require.NoError(t, err)
		j, err := evaluation.DecodeJob(msg.Subject, msg.Data)
		require.NoError(t, err)
		out = append(out, j)
	}
	s.seen = info.State.LastSeq
	return out
}

// entities creates a testset, an application, an auto and a human
// evaluator, and two queries over HTTP; it returns their revision ids and
// the testset's record.
type entities struct {
	testset, testsetID, app, appID, exact, exactID, human, live, all string
}

func (s *evalServer) entities(t *testing.T) entities {
	t.Helper()
	var e entities
	ts := obj(t, s.ok(t, "POST", "/simple/testsets", m{"testset": m{"slug": "qa", "name": "QA", "data": m{"testcases": []any{
		m{"data": m{"question": "2+2", "correct_answer": "4"}}, m{"data": m{"question": "3+3", "correct_answer": "6"}}}}}}), "testset")
	e.testset, e.testsetID = str(ts["revision_id"]), str(ts["id"])
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "app", "data": m{"uri": "svc:builtin:completion:v0"}}}), "application")
	e.app, e.appID = str(app["revision_id"]), str(app["id"])
	ex := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "exact", "data": m{"uri": "svc:builtin:auto_exact_match:v0",
		"parameters": m{"correct_answer_key": "correct_answer"}}}}), "evaluator")
	e.exact, e.exactID = str(ex["revision_id"]), str(ex["id"])
	hu := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "review", "data": m{"uri": "svc:custom:hook:v0", "url": "https://hooks.example.com/x"}}}), "evaluator")
	e.human = str(hu["revision_id"])
	lq := obj(t, s.ok(t, "POST", "/simple/queries", m{"query": m{"slug": "inv", "data": m{"filtering": m{"operator": "and",
		"conditions": []any{m{"field": "trace_type", "operator": "is", "value": "invocation"}}}}}}), "query")
	e.live = str(lq["revision_id"])
	aq := obj(t, s.ok(t, "POST", "/simple/queries", m{"query": m{"slug": "all", "data": m{"filtering": m{"conditions": []any{}}}}}), "query")
	e.all = str(aq["revision_id"])
	return e
}

// revSlug is the slug of a revision, which names its step (testset-<slug>).
func (s *evalServer) revSlug(t *testing.T, plural, key, id string) string {
	t.Helper()
	return str(obj(t, s.ok(t, "GET", "/"+plural+"/revisions/"+id, nil), key+"_revision")["slug"])
}

func evalDetail(t *testing.T, r resp) map[string]any {
	t.Helper()
	d, ok := r.json(t)["detail"].(map[string]any)
	require.True(t, ok, "detail is an object: %s", r.body)
	return d
}

// TestSimpleEvaluationsHTTP walks the simple evaluations' routes: create
// pins and starts (one run job), pinning holds across new commits, each
// 4xx names what is at fault, 202/204 answers, scoping, the closed-run
// guard.
func TestSimpleEvaluationsHTTP(t *testing.T) {
	s := newEvalServer(t)
	e := s.entities(t)
	p := "/simple/evaluations"

	created := obj(t, s.ok(t, "POST", p+"/", m{"evaluation": m{"name": "qa run", "data": m{
		"testset_steps": []string{e.testset}, "application_steps": m{e.app: "auto"}, "evaluator_steps": m{e.exact: "auto", e.human: "human"}}}}), "evaluation")
	id := str(created["id"])
	assert.Equal(t, "running", obj(t, created, "data")["status"])
	assert.Equal(t, true, obj(t, created, "flags")["is_active"])
	assert.Equal(t, m{e.exact: "auto", e.human: "human"}, obj(t, created, "data", "evaluator_steps"))
	jobs := s.jobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)
	assert.Equal(t, id, jobs[0].RunID)
	assert.Equal(t, s.project.String(), jobs[0].ProjectID)
	assert.True(t, strings.HasPrefix(jobs[0].ID, "run:"+id+":"))

	// The create answers its cost estimate beside the evaluation, and the
	// estimate route answers the same without creating a run; a budget
	// that is not a positive amount is refused, naming data.budget.
	est := obj(t, s.ok(t, "POST", "/simple/evaluations/estimate", m{"evaluation": m{"data": m{
		"testset_steps": []string{e.testset}, "application_steps": m{e.app: "auto"}, "evaluator_steps": m{e.exact: "auto", e.human: "human"}}}}), "estimate")
	assert.Greater(t, est["cells"], 0.0)
	assert.NotEmpty(t, est["assumptions"])
	assert.Empty(t, s.jobs(t), "an estimate starts nothing")
	r0 := s.do(t, "POST", "/simple/evaluations/estimate", m{"evaluation": m{"data": m{"testset_steps": []string{uuid.NewString()}}}})
	require.Equal(t, http.StatusNotFound, r0.status, string(r0.body))
	assert.Equal(t, "data.testset_steps", evalDetail(t, r0)["field"])
	r0 = s.do(t, "POST", p, m{"evaluation": m{"data": m{"testset_steps": []string{e.testset}, "budget": 0}}})
	require.Equal(t, http.StatusUnprocessableEntity, r0.status, string(r0.body))
	assert.Contains(t, string(r0.body), "budget")

	// Pinning: new revisions of the testset, application and evaluator
	// after create; the run's steps still name the pinned ones.
	s.ok(t, "PUT", "/simple/testsets/"+e.testsetID, m{"testset": m{"id": e.testsetID, "name": "QA", "data": m{"testcases": []any{m{"data": m{"question": "new", "correct_answer": "x"}}}}}})
	s.ok(t, "PUT", "/simple/applications/"+e.appID, m{"application": m{"id": e.appID, "data": m{"uri": "svc:builtin:chat:v0"}}})
	s.ok(t, "PUT", "/simple/evaluators/"+e.exactID, m{"evaluator": m{"id": e.exactID, "data": m{"uri": "svc:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "question"}}}})
	got := obj(t, s.ok(t, "GET", p+"/"+id, nil), "evaluation")
	assert.Equal(t, m{e.testset: "custom"}, obj(t, got, "data", "testset_steps"))
	assert.Equal(t, m{e.app: "auto"}, obj(t, got, "data", "application_steps"))
	assert.Equal(t, m{e.exact: "auto", e.human: "human"}, obj(t, got, "data", "evaluator_steps"))
	assert.Equal(t, m{"count": float64(0)}, s.ok(t, "GET", p+"/"+uuid.NewString(), nil))

	// Each refusal names its field.
	missing := uuid.NewString()
	r := s.do(t, "POST", p, m{"evaluation": m{"data": m{"testset_steps": []string{e.testset}, "evaluator_steps": []string{missing}}}})
	require.Equal(t, http.StatusNotFound, r.status, string(r.body))
	assert.Equal(t, "data.evaluator_steps", evalDetail(t, r)["field"])
	assert.Equal(t, missing, evalDetail(t, r)["revision_id"])
	r = s.do(t, "POST", p, m{"evaluation": m{"data": m{"testset_steps": []string{e.app}}}})
	require.Equal(t, http.StatusNotFound, r.status, "an application revision is no testset")
	r = s.do(t, "POST", p, m{"evaluation": m{"flags": m{"is_live": true}, "data": m{"query_steps": []string{e.all}, "evaluator_steps": m{e.exact: "auto"}}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	assert.Equal(t, "data.query_steps", evalDetail(t, r)["field"])
	for name, body := range map[string]any{
		"no evaluation":      m{},
		"steps not a list":   m{"evaluation": m{"data": m{"testset_steps": "x"}}},
		"bad origin":         m{"evaluation": m{"data": m{"evaluator_steps": m{e.exact: "robot"}}}},
		"repeats zero":       m{"evaluation": m{"data": m{"repeats": 0}}},
		"name not a string":  m{"evaluation": m{"name": 3}},
		"evaluation a list":  m{"evaluation": []any{}},
		"bad status":         m{"evaluation": m{"data": m{"status": "done"}}},
		"concurrency a list": m{"evaluation": m{"data": m{"concurrency": []any{}}}},
	} {
		r := s.do(t, "POST", p, body)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", name, r.body)
	}

	// Unsupported: answered with the failed, closed run.
	bad := obj(t, s.ok(t, "POST", p, m{"evaluation": m{"data": m{"testset_steps": []string{e.testset}, "query_steps": []string{e.all}, "evaluator_steps": m{e.exact: "auto"}}}}), "evaluation")
	assert.Equal(t, "failure", obj(t, bad, "data")["status"])
	assert.Equal(t, true, obj(t, bad, "flags")["is_closed"])
	assert.Contains(t, obj(t, bad, "meta", "error")["message"], "query and a testset")
	assert.Empty(t, s.jobs(t))

	// A client-driven run: slices and shapes.
	cd := obj(t, s.ok(t, "POST", p, m{"evaluation": m{"data": m{"status": "running", "testset_steps": []string{e.testset}, "evaluator_steps": m{e.exact: "auto"}}}}), "evaluation")
	cid := str(cd["id"])
	other := obj(t, s.ok(t, "POST", p, m{"evaluation": m{"data": m{"status": "running", "testset_steps": []string{e.testset}}}}), "evaluation")
	oid := str(other["id"])
	assert.Empty(t, s.jobs(t))
	scens := list(t, s.ok(t, "POST", p+"/"+cid+"/scenarios/add", m{"count": 2, "timestamp": "2026-05-01T10:30:45Z"}), "scenarios")
	require.Len(t, scens, 2)
	s0 := str(scens[0].(m)["id"])
	assert.Equal(t, "2026-05-01T10:30:00Z", scens[0].(m)["timestamp"])
	assert.Equal(t, float64(1), scens[0].(m)["interval"])
	oscen := str(list(t, s.ok(t, "POST", p+"/"+oid+"/scenarios/add", m{"count": 1}), "scenarios")[0].(m)["id"])
	tsKey := "testset-" + s.revSlug(t, "testsets", "testset", e.testset)
	populated := s.ok(t, "POST", p+"/"+cid+"/populate", m{"results": []any{m{"scenario_id": s0, "step_key": tsKey, "status": "success"}}})
	assert.Equal(t, float64(1), populated["count"])
	r = s.do(t, "POST", p+"/"+cid+"/populate", m{"results": []any{m{"scenario_id": oscen, "step_key": tsKey, "status": "success"}}})
	require.Equal(t, http.StatusBadRequest, r.status, "a scenario of another run: %s", r.body)
	assert.Contains(t, string(r.body), oscen)
	probe := s.ok(t, "POST", p+"/"+cid+"/probe", m{"scenario_ids": []string{s0}})
	assert.Equal(t, float64(1), probe["count"])
	r = s.do(t, "POST", p+"/"+cid+"/probe", m{"step_keys": []string{"evaluator-nope"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "step_keys", evalDetail(t, r)["field"])

	r = s.do(t, "POST", p+"/"+cid+"/process", m{"scenario_ids": []string{s0}, "statuses": []string{"failure", "errors"}})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	assert.Empty(t, r.body)
	r = s.do(t, "POST", p+"/"+cid+"/refresh", nil)
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	jobs = s.jobs(t)
	require.Len(t, jobs, 2)
	assert.Equal(t, evaluation.KindProcess, jobs[0].Kind)
	assert.Equal(t, []string{"failure", "errors"}, jobs[0].Statuses)
	assert.Equal(t, []string{s0}, jobs[0].Slice.ScenarioIDs)
	assert.Equal(t, evaluation.KindMetrics, jobs[1].Kind)
	r = s.do(t, "POST", p+"/"+cid+"/process", m{"scenario_ids": []string{oscen}})
	assert.Equal(t, http.StatusBadRequest, r.status, "process is scoped to its run")
	r = s.do(t, "POST", p+"/"+cid+"/process", m{"statuses": []string{"finished"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)

	r = s.do(t, "POST", p+"/"+cid+"/prune", m{"scenario_ids": []string{s0}})
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	assert.Equal(t, float64(0), s.ok(t, "POST", p+"/"+cid+"/probe", nil)["count"])
	r = s.do(t, "POST", p+"/"+cid+"/scenarios/remove", m{"scenario_ids": []string{str(scens[1].(m)["id"])}})
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	r = s.do(t, "POST", p+"/"+cid+"/scenarios/remove", m{"scenario_ids": []string{oscen}})
	assert.Equal(t, http.StatusBadRequest, r.status)

	run := obj(t, s.ok(t, "POST", p+"/"+cid+"/steps/add", m{"steps": []any{m{"key": "evaluator-extra", "type": "annotation", "origin": "human"}}}), "run")
	assert.Len(t, obj(t, run, "data")["steps"], 3)
	run = obj(t, s.ok(t, "POST", p+"/"+cid+"/steps/remove", m{"step_keys": []string{"evaluator-extra"}}), "run")
	assert.Len(t, obj(t, run, "data")["steps"], 2)
	run = obj(t, s.ok(t, "POST", p+"/"+cid+"/repeats/set", m{"repeats": 3}), "run")
	assert.Equal(t, float64(3), obj(t, run, "data")["repeats"])
	r = s.do(t, "POST", p+"/"+cid+"/repeats/set", m{"repeats": "3"})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)

	edited := obj(t, s.ok(t, "PATCH", p+"/"+cid, m{"evaluation": m{"name": "renamed"}}), "evaluation")
	assert.Equal(t, "renamed", edited["name"])
	r = s.do(t, "PATCH", p+"/"+cid, m{"evaluation": m{"id": oid}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "a body id other than the path's")
	q := s.ok(t, "POST", p+"/query", m{"evaluation": m{"ids": []string{cid, oid}}})
	assert.Equal(t, float64(2), q["count"])

	// Stop, close: every write is the compatible platform's 409; open, start again.
	stopped := obj(t, s.ok(t, "POST", p+"/"+cid+"/stop", nil), "evaluation")
	assert.Equal(t, false, obj(t, stopped, "flags")["is_active"])
	assert.Equal(t, "cancelled", obj(t, stopped, "data")["status"])
	closed := obj(t, s.ok(t, "POST", p+"/"+cid+"/close", nil), "evaluation")
	assert.Equal(t, true, obj(t, closed, "flags")["is_closed"])
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/start", nil}, {"POST", "/stop", nil}, {"PATCH", "", m{"evaluation": m{"name": "x"}}}, {"DELETE", "", nil},
		{"POST", "/populate", m{"results": []any{m{"scenario_id": s0, "step_key": tsKey, "status": "success"}}}},
		{"POST", "/process", nil}, {"POST", "/prune", nil}, {"POST", "/refresh", nil},
		{"POST", "/scenarios/add", m{"count": 1}}, {"POST", "/scenarios/remove", m{"scenario_ids": []string{s0}}},
		{"POST", "/steps/add", m{"steps": []any{m{"key": "k", "type": "annotation"}}}}, {"POST", "/steps/remove", m{"step_keys": []string{tsKey}}},
		{"POST", "/repeats/set", m{"repeats": 2}},
	} {
		r := s.do(t, w.method, p+"/"+cid+w.path, w.body)
		require.Equal(t, http.StatusConflict, r.status, "%s %s: %s", w.method, w.path, r.body)
		assert.Equal(t, m{"message": "Cannot modify a closed evaluation.", "run_id": cid}, evalDetail(t, r), w.path)
	}
	assert.Empty(t, s.jobs(t))
	s.ok(t, "POST", p+"/"+cid+"/open", nil)
	started := obj(t, s.ok(t, "POST", p+"/"+cid+"/start", nil), "evaluation")
	assert.Equal(t, "running", obj(t, started, "data")["status"])
	jobs = s.jobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)

	deleted := s.ok(t, "DELETE", p+"/"+oid, nil)
	assert.Equal(t, m{"count": float64(1), "evaluation_id": oid}, deleted)
	assert.Equal(t, m{"count": float64(0)}, s.ok(t, "GET", p+"/"+oid, nil))
}

// TestSimpleQueuesHTTP: the queue kinds, the human evaluator rule,
// assignments and a user's scenarios, traces and testcases into the queue
// of their kind only.
func TestSimpleQueuesHTTP(t *testing.T) {
	s := newEvalServer(t)
	e := s.entities(t)
	p := "/simple/queues"
	annotator := uuid.NewString()

	r := s.do(t, "POST", p, m{"queue": m{"data": m{"kind": "traces", "evaluators": m{e.exact: "auto"}}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	assert.Contains(t, string(r.body), "evaluators")
	r = s.do(t, "POST", p, m{"queue": m{"data": m{"kind": "spans", "evaluators": []string{e.human}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)

	tq := obj(t, s.ok(t, "POST", p+"/", m{"queue": m{"name": "review", "data": m{"kind": "traces", "evaluators": []string{e.human},
		"repeats": 1, "assignments": [][]string{{annotator}}}}}), "queue")
	qid := str(tq["id"])
	assert.Equal(t, "traces", obj(t, tq, "data")["kind"])
	assert.NotEmpty(t, tq["run_id"])
	assert.Equal(t, "running", tq["status"])
	trace := strings.Repeat("c", 32)
	added := s.ok(t, "POST", p+"/"+qid+"/traces/", m{"trace_ids": []string{trace}})
	assert.Equal(t, float64(1), added["count"])
	r = s.do(t, "POST", p+"/"+qid+"/testcases/", m{"testcase_ids": []string{uuid.NewString()}})
	assert.Equal(t, http.StatusBadRequest, r.status, "testcases into a traces queue: %s", r.body)
	r = s.do(t, "POST", p+"/"+qid+"/traces/", m{"trace_ids": "x"})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Empty(t, s.jobs(t))

	mine := s.ok(t, "POST", p+"/"+qid+"/scenarios/query", m{"user_id": annotator})
	assert.Equal(t, float64(1), mine["count"])
	theirs := s.ok(t, "POST", p+"/"+qid+"/scenarios/query", m{"user_id": uuid.NewString()})
	assert.Equal(t, float64(0), theirs["count"])
	all := s.ok(t, "POST", p+"/"+qid+"/scenarios/query", m{"scenario": m{"statuses": []string{"pending"}}})
	assert.Equal(t, float64(1), all["count"])

	cq := obj(t, s.ok(t, "POST", p, m{"queue": m{"data": m{"kind": "testcases", "evaluators": m{e.human: "human", e.exact: "auto"}}}}), "queue")
	tcs := list(t, obj(t, s.ok(t, "GET", "/simple/testsets/"+e.testsetID, nil), "testset", "data"), "testcase_ids")
	added = s.ok(t, "POST", p+"/"+str(cq["id"])+"/testcases/", m{"testcase_ids": []string{str(tcs[0])}})
	assert.Equal(t, float64(1), added["count"])
	jobs := s.jobs(t)
	require.Len(t, jobs, 1, "the auto evaluator is for the workers")
	assert.Equal(t, evaluation.KindProcess, jobs[0].Kind)
	r = s.do(t, "POST", p+"/"+str(cq["id"])+"/traces/", m{"trace_ids": []string{trace}})
	assert.Equal(t, http.StatusBadRequest, r.status)

	sq := obj(t, s.ok(t, "POST", p, m{"queue": m{"data": m{"testsets": []string{e.testset}, "evaluators": []string{e.human}}}}), "queue")
	assert.Equal(t, "testsets", obj(t, sq, "data")["kind"])
	jobs = s.jobs(t)
	require.Len(t, jobs, 1)
	assert.Equal(t, evaluation.KindRun, jobs[0].Kind)
	assert.Equal(t, str(sq["run_id"]), jobs[0].RunID)

	got := obj(t, s.ok(t, "GET", p+"/"+qid, nil), "queue")
	assert.Equal(t, qid, got["id"])
	assert.Equal(t, m{"count": float64(0)}, s.ok(t, "GET", p+"/"+uuid.NewString(), nil))
	q := s.ok(t, "POST", p+"/query", m{"queue": m{"ids": []string{qid, str(cq["id"])}}})
	assert.Equal(t, float64(2), q["count"])

	// A queue with step keys is one of its own, which can be deleted.
	kq := obj(t, s.ok(t, "POST", p, m{"queue": m{"data": m{"kind": "traces", "evaluators": []string{e.human},
		"step_keys": []string{"evaluator-" + s.revSlug(t, "evaluators", "evaluator", e.human)}}}}), "queue")
	del := s.ok(t, "DELETE", p, m{"queue_ids": []string{str(kq["id"])}})
	assert.Equal(t, float64(1), del["count"])
	r = s.do(t, "DELETE", p, m{"queue_ids": []string{qid}})
	assert.Equal(t, http.StatusConflict, r.status, "a default queue is archived, not deleted")
}

// simpleEvalFuzzFamilies are the simple evaluations and queues as the body fuzz
// target names them; their fixtures are an evaluation (a client-driven
// run with a scenario) and a traces queue ($SID), $RID the testset
// revision and $ID the evaluator revision their bodies name.
var simpleEvalFuzzFamilies = []fuzzFamily{{"simple-evaluations", "evaluation", ""}, {"simple-queues", "queue", ""}}

// simpleEvalSeedBodies are valid bodies of the simple evaluations' and queues'
// write routes.
func simpleEvalSeedBodies(method, path string) []string {
	switch {
	case strings.HasSuffix(path, "/populate"):
		return []string{`{"results":[{"scenario_id":"$SCEN","step_key":"$KEY","status":"success"}]}`}
	case strings.HasSuffix(path, "/process"):
		return []string{`{"scenario_ids":["$SCEN"],"statuses":["failure","errors"]}`, `{"overwrite":true,"repeat_idxs":[0]}`}
	case strings.HasSuffix(path, "/probe"), strings.HasSuffix(path, "/prune"), strings.HasSuffix(path, "/refresh"):
		return []string{`{}`, `{"scenario_ids":["$SCEN"],"step_keys":["$KEY"],"repeat_idxs":[0]}`}
	case strings.HasSuffix(path, "/scenarios/add"):
		return []string{`{"count":2,"timestamp":"2026-05-01T10:30:45Z"}`}
	case strings.HasSuffix(path, "/scenarios/remove"):
		return []string{`{"scenario_ids":["$SCEN"]}`}
	case strings.HasSuffix(path, "/steps/add"):
		return []string{`{"steps":[{"key":"evaluator-fz","type":"annotation","origin":"human"}],"mappings":[{"column":{"kind":"annotation","name":"x"},"step":{"key":"evaluator-fz","path":"attributes.ag.data.outputs.x"}}]}`}
	case strings.HasSuffix(path, "/steps/remove"):
		return []string{`{"step_keys":["evaluator-fz"]}`}
	case strings.HasSuffix(path, "/repeats/set"):
		return []string{`{"repeats":2}`}
	case strings.HasSuffix(path, "/scenarios/query"):
		return []string{`{"user_id":"$USER","scenario":{"statuses":["pending"]},"windowing":{"limit":1}}`}
	case strings.HasSuffix(path, "/traces"):
		return []string{`{"trace_ids":["0123456789abcdef0123456789abcdef"]}`}
	case strings.HasSuffix(path, "/testcases"):
		return []string{`{"testcase_ids":["$TC"]}`}
	case strings.HasSuffix(path, "/query"):
		return []string{`{"evaluation":{"ids":["$SID"]},"windowing":{"limit":1}}`, `{"queue":{"ids":["$SID"]}}`}
	case strings.HasPrefix(path, "/simple/queues") && method == "POST":
		return []string{`{"queue":{"name":"fz","data":{"kind":"traces","evaluators":["$ID"],"repeats":1,"assignments":[["$USER"]]}}}`,
			`{"queue":{"data":{"testsets":["$RID"],"evaluators":{"$ID":"human"}}}}`}
	case method == "PATCH":
		return []string{`{"evaluation":{"name":"fz","data":{"repeats":2}}}`}
	case method == "POST" && path == "/simple/evaluations":
		return []string{`{"evaluation":{"name":"fz","data":{"status":"running","testset_steps":["$RID"],"evaluator_steps":{"$ID":"human"}}}}`,
			`{"evaluation":{"data":{"testset_steps":{"$RID":"custom"},"evaluator_steps":{"$ID":"auto"},"repeats":2,"concurrency":{"batch_size":2}}}}`}
	}
	return []string{`{}`} // start, stop, close, open
}

// makeSimpleEvalFixtures adds the evaluations' and queues' fixtures to fx.
func makeSimpleEvalFixtures(t *testing.T, s *server, fx fixtures) {
	t.Helper()
	rid, evID := fx["testsets"]["$RID"], ""
	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "fx-eval-human", "data": m{"uri": "svc:custom:hook:v0", "url": "https://hooks.example.com/x"}}}), "evaluator")
	evID = str(ev["revision_id"])
	run := obj(t, s.ok(t, "POST", "/simple/evaluations", m{"evaluation": m{"name": "fx", "data": m{"status": "running",
		"testset_steps": []string{rid}, "evaluator_steps": m{evID: "human"}}}}), "evaluation")
	runID := str(run["id"])
	scen := str(list(t, s.ok(t, "POST", "/simple/evaluations/"+runID+"/scenarios/add", m{"count": 1}), "scenarios")[0].(m)["id"])
	key := "testset-" + str(obj(t, s.ok(t, "GET", "/testsets/revisions/"+rid, nil), "testset_revision")["slug"])
	q := obj(t, s.ok(t, "POST", "/simple/queues", m{"queue": m{"data": m{"kind": "traces", "evaluators": []string{evID}}}}), "queue")
	tcs := list(t, obj(t, s.ok(t, "POST", "/testsets/revisions/retrieve", m{"testset_revision_ref": m{"id": rid}}), "testset_revision", "data"), "testcase_ids")
	common := map[string]string{"$RID": rid, "$ID": evID, "$SCEN": scen, "$KEY": key, "$USER": s.user.String(), "$TC": str(tcs[0])}
	fx["simple-evaluations"] = map[string]string{"$SID": runID}
	fx["simple-queues"] = map[string]string{"$SID": str(q["id"])}
	for _, p := range []string{"simple-evaluations", "simple-queues"} {
		for k, v := range common {
			fx[p][k] = v
		}
	}
}
