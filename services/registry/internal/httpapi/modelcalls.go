package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/services/registry/internal/modelcalls"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// modelCallAPI serves the runtime worker's model-call cache and provider
// waits (internal: never routed by the gateway, the runtime's token only).
type modelCallAPI struct{ svc *modelcalls.Service }

func (a modelCallAPI) route(e *echo.Echo) {
	e.POST("/internal/evaluations/model-calls/lookup", notForwarded(runtimeOnly(handle(false, a.lookup))))
	e.POST("/internal/evaluations/model-calls/store", notForwarded(runtimeOnly(handle(false, a.store))))
	e.POST("/internal/evaluations/runs/:id/waits", notForwarded(runtimeOnly(handle(true, a.wait))))
}

// lookup serves {keys:[...]} → {entries:{key: response}} with the live
// entries of the project (a missing key is a miss).
func (a modelCallAPI) lookup(rq *req) error {
	var in struct {
		Keys []string `json:"keys"`
	}
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	out, err := a.svc.Lookup(rq.ctx, rq.sc.ProjectID, in.Keys)
	if err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", len(out)).Put("entries", renderJSON(out)).Done())
}

// store serves {entries:[{key, response, ttl_seconds}]} → {count}.
func (a modelCallAPI) store(rq *req) error {
	var in struct {
		Entries []modelcalls.CachedAnswer `json:"entries"`
	}
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	if err := a.svc.Put(rq.ctx, rq.sc.ProjectID, in.Entries); err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", len(in.Entries)).Done())
}

// wait serves {provider, until} → {count: 1}: the run's cells wait on
// that provider's rate limit until then.
func (a modelCallAPI) wait(rq *req) error {
	var in modelcalls.Wait
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	if err := a.svc.SetWait(rq.ctx, rq.sc.ProjectID, rq.id, in); err != nil {
		return err
	}
	return send(rq.c, wire.NewObj().Put("count", 1).Done())
}
