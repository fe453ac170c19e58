package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// evaluationAPI serves /evaluations: runs, scenarios,
// results, metrics and queues, and the runtime's internal routes. Every
// handler binds, calls the evaluations service and renders.
type evaluationAPI struct{ svc *ev.Service }

func (a evaluationAPI) route(e *echo.Echo) {
	p := "/evaluations"
	// runs
	e.POST(p+"/runs", handle(false, a.createRuns))
	e.PATCH(p+"/runs", handle(false, a.editRuns))
	e.DELETE(p+"/runs", handle(false, deleteMany("run_ids", a.svc.DeleteRuns)))
	e.POST(p+"/runs/query", handle(false, a.queryRuns))
	e.POST(p+"/runs/close", handle(false, a.closeRuns(true)))
	e.POST(p+"/runs/open", handle(false, a.closeRuns(false)))
	e.GET(p+"/runs/:id", byID(a.svc.Run, sendRecord[ev.Run]("run")))
	e.PATCH(p+"/runs/:id", handle(true, a.editRun))
	e.DELETE(p+"/runs/:id", handle(true, deleteOne("run_id", a.svc.DeleteRuns)))
	e.POST(p+"/runs/:id/close", handle(true, a.closeRun(true)))
	e.POST(p+"/runs/:id/close/:status", handle(true, a.closeRun(true))) // the compatible SDK up to 0.102
	e.POST(p+"/runs/:id/open", handle(true, a.closeRun(false)))
	e.GET(p+"/runs/:id/queues/default", byID(a.svc.RunDefaultQueue, sendRecord[ev.Queue]("queue")))
	e.GET(p+"/runs/:id/progress", byID(a.svc.Progress, sendRecord[ev.Progress]("progress")))
	// scenarios
	e.POST(p+"/scenarios", handle(false, writeMany("scenarios", "scenario", a.svc.CreateScenarios)))
	e.PATCH(p+"/scenarios", handle(false, writeMany("scenarios", "scenario", a.svc.EditScenarios)))
	e.DELETE(p+"/scenarios", handle(false, deleteMany("scenario_ids", a.svc.DeleteScenarios)))
	e.POST(p+"/scenarios/query", handle(false, query("scenario", "scenarios", ev.KindScenario, a.svc.QueryScenarios)))
	e.GET(p+"/scenarios/:id", byID(a.svc.Scenario, sendRecord[ev.Scenario]("scenario")))
	e.PATCH(p+"/scenarios/:id", handle(true, writeOne("scenario", func(x *ev.Scenario, id uuid.UUID) { x.ID = id.String() }, a.svc.EditScenarios)))
	e.DELETE(p+"/scenarios/:id", handle(true, deleteOne("scenario_id", a.svc.DeleteScenarios)))
	// results
	for _, add := range []func(string, echo.HandlerFunc, ...echo.MiddlewareFunc) *echo.Route{e.POST, e.PUT, e.PATCH} {
		add(p+"/results", handle(false, writeMany("results", "result", a.svc.UpsertResults)))
		add(p+"/metrics", handle(false, writeMany("metrics", "metric", a.svc.UpsertMetrics)))
	}
	e.DELETE(p+"/results", handle(false, deleteMany("result_ids", a.svc.DeleteResults)))
	e.POST(p+"/results/query", handle(false, query("result", "results", ev.KindResult, a.svc.QueryResults)))
	e.GET(p+"/results/:id", byID(a.svc.Result, sendRecord[ev.Result]("result")))
	e.DELETE(p+"/results/:id", handle(true, deleteOne("result_id", a.svc.DeleteResults)))
	// metrics
	e.DELETE(p+"/metrics", handle(false, a.deleteMetrics))
	e.POST(p+"/metrics/query", handle(false, a.queryMetrics))
	e.POST(p+"/metrics/refresh", handle(false, query("metrics", "metrics", ev.KindMetric, a.svc.RefreshMetrics)))
	e.GET(p+"/metrics/:id", byID(a.svc.Metric, sendMetric))
	e.DELETE(p+"/metrics/:id", handle(true, a.deleteMetric))
	// queues
	e.POST(p+"/queues", handle(false, writeMany("queues", "queue", a.svc.CreateQueues)))
	e.PATCH(p+"/queues", handle(false, writeMany("queues", "queue", a.svc.EditQueues)))
	e.DELETE(p+"/queues", handle(false, deleteMany("queue_ids", a.svc.DeleteQueues)))
	e.POST(p+"/queues/query", handle(false, query("queue", "queues", ev.KindQueue, a.svc.QueryQueues)))
	e.GET(p+"/queues/:id", byID(a.svc.Queue, sendRecord[ev.Queue]("queue")))
	e.PATCH(p+"/queues/:id", handle(true, writeOne("queue", func(x *ev.QueueEdit, id uuid.UUID) { x.ID = id.String() }, a.svc.EditQueues)))
	e.DELETE(p+"/queues/:id", handle(true, deleteOne("queue_id", a.svc.DeleteQueues)))
	e.POST(p+"/queues/:id/scenarios/query", handle(true, a.queueScenarios))
	// the runtime's worker (never routed by the gateway)
	e.POST("/internal/evaluations/runs/:id/settle", notForwarded(handle(true, a.settle)))
	e.POST("/internal/evaluations/runs/:id/fail", notForwarded(handle(true, a.fail)))
	e.POST("/internal/evaluations/runs/:id/cancel", notForwarded(handle(true, a.cancel)))
	e.POST("/internal/evaluations/runs/:id/pause", notForwarded(handle(true, a.pause)))
	e.POST("/internal/evaluations/results/claim", notForwarded(handle(false, a.claim)))
	e.POST("/internal/evaluations/results/renew", notForwarded(handle(false, a.renew)))
	e.POST("/internal/evaluations/jobs", notForwarded(runtimeOnly(handle(false, a.fanOut))))
}

// runtimeOnly answers 404 to every caller but the runtime: the route
// publishes evaluation jobs for the runtime's worker, and no other
// service's token may start work on the EVALS stream through it.
func runtimeOnly(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if scope.CallerFrom(c.Request().Context()) != "runtime" {
			return errs.New(errs.NotFound, "registry.not_found", "Not Found")
		}
		return h(c)
	}
}

// fanOut serves the worker's POST /internal/evaluations/jobs {jobs}: the
// process jobs a run job fans out, published with the ids they carry.
func (a evaluationAPI) fanOut(rq *req) error {
	var in struct {
		Jobs []evaluation.Job `json:"jobs"`
	}
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	if err := a.svc.FanOut(rq.ctx, rq.sc, in.Jobs); err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", len(in.Jobs)).Done())
}

// notForwarded answers 404 to a request the gateway forwarded (its proxy
// always sets X-Forwarded-Host): the gateway routes nothing under
// /internal, and this is the second lock, as on the vault's reveal.
func notForwarded(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Header.Get("X-Forwarded-Host") != "" {
			return errs.New(errs.NotFound, "registry.not_found", "Not Found")
		}
		return h(c)
	}
}

// sendOneRaw answers {"count": 1, key: v} or {"count": 0} when v is nil.
func sendOneRaw(c echo.Context, key string, v json.RawMessage) error {
	if v == nil {
		return send(c, wire.NewObj().Put("count", 0).Done())
	}
	return send(c, wire.NewObj().Put("count", 1).Put(key, v).Done())
}

// sendRecord renders one record (or the empty envelope for nil).
func sendRecord[T any](key string) func(echo.Context, *T, error) error {
	return func(c echo.Context, v *T, err error) error {
		if err != nil {
			return err
		}
		if v == nil {
			return sendOneRaw(c, key, nil)
		}
		return sendOneRaw(c, key, renderJSON(v))
	}
}

// sendList renders {"count": n, key: [...], "windowing"?: next}.
func sendList[T any](c echo.Context, key string, xs []T, next json.RawMessage) error {
	out := make([]json.RawMessage, len(xs))
	for i := range xs {
		out[i] = renderJSON(&xs[i])
	}
	return send(c, wire.List(key, out, next))
}

// writeMany serves a bulk write of {plural: [...]} (or {single: {...}}).
func writeMany[T, R any](plural, single string, call func(context.Context, scope.Scope, []T) ([]R, error)) func(*req) error {
	return func(rq *req) error {
		in, err := items[T](rq.b, plural, single)
		if err != nil {
			return err
		}
		out, err := call(rq.ctx, rq.sc, in)
		if err != nil {
			return err
		}
		return sendList(rq.c, plural, out, nil)
	}
}

// writeOne serves an edit of the path's record from {key: {...}}.
func writeOne[T, R any](key string, setID func(*T, uuid.UUID), call func(context.Context, scope.Scope, []T) ([]R, error)) func(*req) error {
	return func(rq *req) error {
		in, err := item[T](rq.b, key)
		if err != nil {
			return err
		}
		setID(&in, rq.id)
		out, err := call(rq.ctx, rq.sc, []T{in})
		if err != nil {
			return err
		}
		if len(out) == 0 {
			return sendOneRaw(rq.c, key, nil)
		}
		return sendOneRaw(rq.c, key, renderJSON(&out[0]))
	}
}

// deleteMany serves DELETE {key: [ids]} → {count, key: [deleted ids]}.
func deleteMany(key string, call func(context.Context, scope.Scope, []uuid.UUID) ([]uuid.UUID, error)) func(*req) error {
	return func(rq *req) error {
		ids, err := idList(rq.b, key)
		if err != nil {
			return err
		}
		out, err := call(rq.ctx, rq.sc, ids)
		if err != nil {
			return err
		}
		return send(rq.c, wire.NewObj().Put("count", len(out)).Put(key, out).Done())
	}
}

// deleteOne serves DELETE /…/{id} → {count, key: id} or {count: 0}.
func deleteOne(key string, call func(context.Context, scope.Scope, []uuid.UUID) ([]uuid.UUID, error)) func(*req) error {
	return func(rq *req) error {
		out, err := call(rq.ctx, rq.sc, []uuid.UUID{rq.id})
		if err != nil {
			return err
		}
		if len(out) == 0 {
			return sendOneRaw(rq.c, key, nil)
		}
		return send(rq.c, wire.NewObj().Put("count", 1).Put(key, out[0]).Done())
	}
}

// query serves POST …/query {key: filter, windowing}.
func query[T any](key, plural string, kind ev.Kind, call func(context.Context, scope.Scope, ev.Filter) (ev.Page[T], error)) func(*req) error {
	return func(rq *req) error {
		f, err := bindFilter(rq.b, key, kind)
		if err != nil {
			return err
		}
		p, err := call(rq.ctx, rq.sc, f)
		if err != nil {
			return err
		}
		return sendList(rq.c, plural, p.Items, pageWindow(p.Next))
	}
}

func (a evaluationAPI) createRuns(rq *req) error {
	return writeMany("runs", "run", a.svc.CreateRuns)(rq)
}

func (a evaluationAPI) editRuns(rq *req) error {
	return writeMany("runs", "run", a.svc.EditRuns)(rq)
}

func (a evaluationAPI) editRun(rq *req) error {
	return writeOne("run", func(x *ev.RunEdit, id uuid.UUID) { x.ID = id.String() }, a.svc.EditRuns)(rq)
}

func (a evaluationAPI) queryRuns(rq *req) error {
	return query("run", "runs", ev.KindRun, a.svc.QueryRuns)(rq)
}

func (a evaluationAPI) closeRuns(closed bool) func(*req) error {
	return func(rq *req) error {
		ids, err := idList(rq.b, "run_ids")
		if err != nil {
			return err
		}
		out, err := a.svc.SetClosed(rq.ctx, rq.sc, ids, closed)
		if err != nil {
			return err
		}
		return sendList(rq.c, "runs", out, nil)
	}
}

// closeRun serves POST /runs/{id}/close and /open. A close may carry the
// run's final status (?status=, or the path's /close/{status} of the
// compatible SDK up to 0.102): the SDK drives its own loop and sets the
// status it rolled up from its scenarios.
func (a evaluationAPI) closeRun(closed bool) func(*req) error {
	return func(rq *req) error {
		var status *ev.Status
		if closed {
			loc := []any{"query", "status"}
			raw := rq.c.QueryParam("status")
			if p := rq.c.Param("status"); p != "" {
				raw, loc = p, []any{"path", "status"}
			}
			if raw != "" {
				if !validStatus(ev.Status(raw)) {
					return errs.Field("Input should be a status (pending, queued, running, success, failure, errors, cancelled)", raw, loc...)
				}
				st := ev.Status(raw)
				status = &st
			}
		}
		out, err := a.svc.Close(rq.ctx, rq.sc, []uuid.UUID{rq.id}, closed, status)
		if err != nil {
			return err
		}
		if len(out) == 0 {
			return sendOneRaw(rq.c, "run", nil)
		}
		return sendOneRaw(rq.c, "run", renderJSON(&out[0]))
	}
}

// The compatible API names a metrics record "metrics": its ids are
// metrics_ids and one record comes as a metrics list. Ours (metric_ids,
// metric, metric_id) stay beside them, so both kinds of client read their
// own key.

// deleteMetrics serves DELETE /metrics {metrics_ids | metric_ids} →
// {count, metrics_ids, metric_ids}.
func (a evaluationAPI) deleteMetrics(rq *req) error {
	key := "metrics_ids"
	if wire.IsNull(rq.b.Value(key)) && !wire.IsNull(rq.b.Value("metric_ids")) {
		key = "metric_ids"
	}
	ids, err := idList(rq.b, key)
	if err != nil {
		return err
	}
	out, err := a.svc.DeleteMetrics(rq.ctx, rq.sc, ids)
	if err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", len(out)).Put("metrics_ids", out).Put("metric_ids", out).Done())
}

// deleteMetric serves DELETE /metrics/{id} → {count, metrics_ids: [id],
// metric_id} or {count: 0}.
func (a evaluationAPI) deleteMetric(rq *req) error {
	out, err := a.svc.DeleteMetrics(rq.ctx, rq.sc, []uuid.UUID{rq.id})
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return sendOneRaw(rq.c, "metric_id", nil)
	}
	return send(rq.c, wire.NewObj().Put("count", 1).Put("metrics_ids", out).Put("metric_id", out[0]).Done())
}

// sendMetric answers GET /metrics/{id}: {count, metrics: [m], metric: m}
// or {count: 0}.
func sendMetric(c echo.Context, m *ev.Metric, err error) error {
	if err != nil {
		return err
	}
	if m == nil {
		return sendOneRaw(c, "metric", nil)
	}
	r := renderJSON(m)
	return send(c, wire.NewObj().Put("count", 1).Put("metrics", []json.RawMessage{r}).Put("metric", r).Done())
}

// queryMetrics serves POST /metrics/query {metrics | metric, windowing}.
// Every compatible client sends the filter under metrics; metric is ours
// and stays an alias. Any other top-level key is a 422 naming it: a filter
// under a key nobody reads would answer every metric of the project.
func (a evaluationAPI) queryMetrics(rq *req) error {
	for k := range rq.b.Map() {
		switch k {
		case "metrics", "metric", "windowing":
		default:
			return errs.Field("Unknown field: the filter goes under metrics", nil, "body", k)
		}
	}
	key := "metrics"
	if !wire.IsNull(rq.b.Value("metric")) {
		if !wire.IsNull(rq.b.Value("metrics")) {
			return errs.Field("Give the filter under metrics or metric, not both", nil, "body", "metric")
		}
		key = "metric"
	}
	return query(key, "metrics", ev.KindMetric, a.svc.QueryMetrics)(rq)
}

// queueScenarios serves POST /queues/{id}/scenarios/query {scenario?,
// user_id?, windowing?}.
func (a evaluationAPI) queueScenarios(rq *req) error {
	f, err := bindFilter(rq.b, "scenario", ev.KindScenario)
	if err != nil {
		return err
	}
	userID := rq.b.ID("user_id")
	if err := wire.ErrOf(rq.b); err != nil {
		return err
	}
	p, err := a.svc.QueueScenarios(rq.ctx, rq.sc, rq.id, userID, f)
	if err != nil {
		return err
	}
	if p == nil {
		return sendList[ev.Scenario](rq.c, "scenarios", nil, nil)
	}
	return sendList(rq.c, "scenarios", p.Items, pageWindow(p.Next))
}

// settle serves the worker's POST /internal/evaluations/runs/{id}/settle.
func (a evaluationAPI) settle(rq *req) error {
	r, p, err := a.svc.Settle(rq.ctx, rq.sc, rq.id)
	if err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", 1).Put("run", renderJSON(r)).Put("progress", renderJSON(p)).Done())
}

// fail serves POST /internal/evaluations/runs/{id}/fail {error}.
func (a evaluationAPI) fail(rq *req) error {
	if err := checkDepth(rq.b.Value("error"), "body", "error"); err != nil {
		return err
	}
	r, err := a.svc.Fail(rq.ctx, rq.sc, rq.id, rq.b.Value("error"))
	if err != nil {
		return err
	}
	return sendOneRaw(rq.c, "run", renderJSON(r))
}

// cancel serves POST /internal/evaluations/runs/{id}/cancel {stop}: the
// worker stops a run for a reason of its own (its budget reached).
func (a evaluationAPI) cancel(rq *req) error {
	if err := checkDepth(rq.b.Value("stop"), "body", "stop"); err != nil {
		return err
	}
	r, err := a.svc.Cancel(rq.ctx, rq.sc, rq.id, rq.b.Value("stop"))
	if err != nil {
		return err
	}
	return sendOneRaw(rq.c, "run", renderJSON(r))
}

// pause serves POST /internal/evaluations/runs/{id}/pause {pause}: the
// worker records why a live run scores no window for now (its daily
// budget reached), or clears it with null.
func (a evaluationAPI) pause(rq *req) error {
	if err := checkDepth(rq.b.Value("pause"), "body", "pause"); err != nil {
		return err
	}
	r, err := a.svc.Pause(rq.ctx, rq.sc, rq.id, rq.b.Value("pause"))
	if err != nil {
		return err
	}
	return sendOneRaw(rq.c, "run", renderJSON(r))
}

// claim serves POST /internal/evaluations/results/claim.
func (a evaluationAPI) claim(rq *req) error {
	var in ev.ClaimRequest
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	out, err := a.svc.Claim(rq.ctx, rq.sc, in)
	if err != nil {
		return err
	}
	return sendList(rq.c, "results", out, nil)
}

// renew serves POST /internal/evaluations/results/renew.
func (a evaluationAPI) renew(rq *req) error {
	var in ev.ClaimRequest
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	n, err := a.svc.Renew(rq.ctx, rq.sc, in)
	if err != nil {
		return err
	}
	return sendJSON(rq.c, map[string]any{"count": n})
}
