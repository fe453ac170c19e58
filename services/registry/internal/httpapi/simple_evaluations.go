package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// simpleEvaluationAPI serves /simple/evaluations:
// binding and rendering over simpleevals.Simple.
type simpleEvaluationAPI struct{ uc *simpleevals.Simple }

func (a simpleEvaluationAPI) route(e *echo.Echo) {
	p := "/simple/evaluations"
	e.POST(p, handle(false, a.create))
	e.POST(p+"/query", handle(false, a.query))
	e.POST(p+"/estimate", handle(false, a.estimate))
	e.GET(p+"/:id", handle(true, a.fetch))
	e.PATCH(p+"/:id", handle(true, a.edit))
	e.DELETE(p+"/:id", handle(true, a.delete))
	e.POST(p+"/:id/start", handle(true, a.one(a.uc.Start)))
	e.POST(p+"/:id/stop", handle(true, a.one(a.uc.Stop)))
	e.POST(p+"/:id/close", handle(true, a.closing(true)))
	e.POST(p+"/:id/open", handle(true, a.closing(false)))
	e.POST(p+"/:id/populate", handle(true, a.populate))
	e.POST(p+"/:id/process", handle(true, a.process))
	e.POST(p+"/:id/probe", handle(true, a.probe))
	e.POST(p+"/:id/prune", handle(true, a.slice204(a.uc.Prune)))
	e.POST(p+"/:id/refresh", handle(true, a.slice204(a.uc.Refresh)))
	e.POST(p+"/:id/scenarios/add", handle(true, a.addScenarios))
	e.POST(p+"/:id/scenarios/remove", handle(true, a.removeScenarios))
	e.POST(p+"/:id/steps/add", handle(true, a.addSteps))
	e.POST(p+"/:id/steps/remove", handle(true, a.removeSteps))
	e.POST(p+"/:id/repeats/set", handle(true, a.setRepeats))
}

// simpleJSON answers v as JSON with status.
func simpleJSON(c echo.Context, status int, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.JSONBlob(status, raw)
}

// sendEvaluation answers {count, evaluation}, or {count: 0}.
func sendEvaluation(c echo.Context, ev *simpleevals.SimpleEvaluation, err error) error {
	if err != nil {
		return err
	}
	if ev == nil {
		return simpleJSON(c, http.StatusOK, map[string]any{"count": 0})
	}
	return simpleJSON(c, http.StatusOK, map[string]any{"count": 1, "evaluation": ev})
}

// evaluationBody reads the evaluation object of a create or edit.
func evaluationBody(rq *req) (*simpleevals.SimpleInput, error) {
	in := rq.b.Require("evaluation")
	if err := wire.ErrOf(rq.b); err != nil {
		return nil, err
	}
	_, raw := rq.b.Raw("evaluation")
	return simpleevals.ParseSimple(raw, in.Loc()...)
}

func (a simpleEvaluationAPI) create(rq *req) error {
	in, err := evaluationBody(rq)
	if err != nil {
		return err
	}
	ev, err := a.uc.Create(rq.ctx, rq.sc, in)
	if err != nil || ev == nil || ev.Estimate == nil {
		return sendEvaluation(rq.c, ev, err)
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 1, "evaluation": ev, "estimate": ev.Estimate})
}

// estimate serves POST /simple/evaluations/estimate {evaluation}: the
// create's cost estimate without creating anything.
func (a simpleEvaluationAPI) estimate(rq *req) error {
	in, err := evaluationBody(rq)
	if err != nil {
		return err
	}
	est, err := a.uc.Estimate(rq.ctx, rq.sc, in)
	if err != nil {
		return err
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"estimate": est})
}

func (a simpleEvaluationAPI) fetch(rq *req) error {
	ev, err := a.uc.Fetch(rq.ctx, rq.sc, rq.id)
	return sendEvaluation(rq.c, ev, err)
}

func (a simpleEvaluationAPI) edit(rq *req) error {
	in, err := evaluationBody(rq)
	if err != nil {
		return err
	}
	if in.ID != nil && *in.ID != rq.id.String() {
		return errs.Field("The evaluation id in the body does not match the path", *in.ID, "body", "evaluation", "id")
	}
	ev, err := a.uc.Edit(rq.ctx, rq.sc, rq.id, in)
	return sendEvaluation(rq.c, ev, err)
}

func (a simpleEvaluationAPI) delete(rq *req) error {
	ok, err := a.uc.Delete(rq.ctx, rq.sc, rq.id)
	if err != nil {
		return err
	}
	if !ok {
		return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 0})
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 1, "evaluation_id": rq.id.String()})
}

func (a simpleEvaluationAPI) one(call func(context.Context, scope.Scope, uuid.UUID) (*simpleevals.SimpleEvaluation, error)) func(*req) error {
	return func(rq *req) error {
		ev, err := call(rq.ctx, rq.sc, rq.id)
		return sendEvaluation(rq.c, ev, err)
	}
}

func (a simpleEvaluationAPI) closing(closed bool) func(*req) error {
	return func(rq *req) error {
		ev, err := a.uc.SetClosed(rq.ctx, rq.sc, rq.id, closed)
		return sendEvaluation(rq.c, ev, err)
	}
}

// query reads {evaluation?: {ids?, name?, flags?, tags?, meta?}, windowing?}.
func (a simpleEvaluationAPI) query(rq *req) error {
	b := rq.b
	f := evaluations.Filter{Windowing: b.Windowing()}
	if q := b.Sub("evaluation"); q != nil {
		f.Name, f.Flags, f.Tags, f.Meta = q.Str("name"), q.Object("flags"), q.Object("tags"), q.Object("meta")
		var ids []uuid.UUID
		if q.Decode(&ids, "Input should be a list of UUIDs", "ids") {
			f.IDs = ids
		}
		b.Adopt(q)
	}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	evs, p, err := a.uc.Query(rq.ctx, rq.sc, f)
	if err != nil {
		return err
	}
	out := map[string]any{"count": len(evs), "evaluations": evs}
	if p.Next != nil {
		out["windowing"] = p.Next
	}
	return simpleJSON(rq.c, http.StatusOK, out)
}

// simpleSlice reads a slice operation's body.
func simpleSlice(rq *req) (*simpleevals.SliceInput, error) {
	raw, _ := json.Marshal(rq.b.Map())
	return simpleevals.ParseSlice(raw, "body")
}

func (a simpleEvaluationAPI) populate(rq *req) error {
	in, err := simpleSlice(rq)
	if err != nil {
		return err
	}
	rs, err := a.uc.Populate(rq.ctx, rq.sc, rq.id, in)
	if err != nil {
		return err
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": len(rs), "results": rs})
}

func (a simpleEvaluationAPI) probe(rq *req) error {
	in, err := simpleSlice(rq)
	if err != nil {
		return err
	}
	rs, err := a.uc.Probe(rq.ctx, rq.sc, rq.id, in)
	if err != nil {
		return err
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": len(rs), "results": rs})
}

func (a simpleEvaluationAPI) process(rq *req) error {
	in, err := simpleSlice(rq)
	if err != nil {
		return err
	}
	if err := a.uc.Process(rq.ctx, rq.sc, rq.id, in); err != nil {
		return err
	}
	return rq.c.NoContent(http.StatusAccepted)
}

func (a simpleEvaluationAPI) slice204(call func(context.Context, scope.Scope, uuid.UUID, *simpleevals.SliceInput) error) func(*req) error {
	return func(rq *req) error {
		in, err := simpleSlice(rq)
		if err != nil {
			return err
		}
		if err := call(rq.ctx, rq.sc, rq.id, in); err != nil {
			return err
		}
		return rq.c.NoContent(http.StatusNoContent)
	}
}

func (a simpleEvaluationAPI) addScenarios(rq *req) error {
	b := rq.b
	n := b.Int("count")
	ts := b.Time("timestamp")
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	if n == nil {
		return wire.FieldMissing("body", "count")
	}
	ss, err := a.uc.AddScenarios(rq.ctx, rq.sc, rq.id, *n, ts)
	if err != nil {
		return err
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": len(ss), "scenarios": ss})
}

func (a simpleEvaluationAPI) removeScenarios(rq *req) error {
	in, err := simpleSlice(rq)
	if err != nil {
		return err
	}
	if err := a.uc.RemoveScenarios(rq.ctx, rq.sc, rq.id, in.ScenarioIDs); err != nil {
		return err
	}
	return rq.c.NoContent(http.StatusNoContent)
}

func simpleRun(c echo.Context, r *evaluations.Run, err error) error {
	if err != nil {
		return err
	}
	return simpleJSON(c, http.StatusOK, map[string]any{"count": 1, "run": r})
}

func (a simpleEvaluationAPI) addSteps(rq *req) error {
	var steps []evaluations.Step
	var mappings []evaluations.Mapping
	rq.b.Decode(&steps, "Input should be a list of steps", "steps")
	rq.b.Decode(&mappings, "Input should be a list of mappings", "mappings")
	if err := wire.ErrOf(rq.b); err != nil {
		return err
	}
	r, err := a.uc.AddSteps(rq.ctx, rq.sc, rq.id, steps, mappings)
	return simpleRun(rq.c, r, err)
}

func (a simpleEvaluationAPI) removeSteps(rq *req) error {
	in, err := simpleSlice(rq)
	if err != nil {
		return err
	}
	r, err := a.uc.RemoveSteps(rq.ctx, rq.sc, rq.id, in.StepKeys)
	return simpleRun(rq.c, r, err)
}

func (a simpleEvaluationAPI) setRepeats(rq *req) error {
	n := rq.b.Int("repeats")
	if err := wire.ErrOf(rq.b); err != nil {
		return err
	}
	if n == nil {
		return wire.FieldMissing("body", "repeats")
	}
	r, err := a.uc.SetRepeats(rq.ctx, rq.sc, rq.id, *n)
	return simpleRun(rq.c, r, err)
}
