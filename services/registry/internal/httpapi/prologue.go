package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// req is a bound request: what every handler's prologue reads.
type req struct {
	c   echo.Context
	ctx context.Context
	sc  scope.Scope
	id  uuid.UUID // the path id, on routes with :id
	b   *wire.Body
}

// handle is the one handler prologue: the caller's scope, the path id
// when withID, and the JSON body; then h.
func handle(withID bool, h func(r *req) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, id, b, err := request(c, withID)
		if err != nil {
			return err
		}
		return h(&req{c: c, ctx: c.Request().Context(), sc: sc, id: id, b: b})
	}
}

// withObject is handle for a body that must hold an object under key (a
// 422 when it is missing or not an object); h gets that object.
func withObject(withID bool, key string, h func(r *req, in *wire.Body) error) echo.HandlerFunc {
	return handle(withID, func(r *req) error {
		in := r.b.Require(key)
		if err := wire.ErrOf(r.b); err != nil {
			return err
		}
		return h(r, in)
	})
}

// byID serves a route answering one call on the path id.
func byID[T any](call func(context.Context, scope.Scope, uuid.UUID) (T, error), render func(echo.Context, T, error) error) echo.HandlerFunc {
	return handle(true, func(r *req) error {
		v, err := call(r.ctx, r.sc, r.id)
		return render(r.c, v, err)
	})
}

// archiving binds the archived flag of an (un)archive call.
func archiving[T any](call func(context.Context, scope.Scope, uuid.UUID, bool) (T, error), archived bool) func(context.Context, scope.Scope, uuid.UUID) (T, error) {
	return func(ctx context.Context, sc scope.Scope, id uuid.UUID) (T, error) { return call(ctx, sc, id, archived) }
}

// stream is handle for routes whose body is a stream (uploads) or unused:
// the scope and, when withID, the path id; rq.b is nil.
func stream(withID bool, h func(rq *req) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, id, err := scopeAndID(c, withID)
		if err != nil {
			return err
		}
		return h(&req{c: c, ctx: c.Request().Context(), sc: sc, id: id})
	}
}

// withCommit is withObject for a commit, whose object is under key or,
// when only that is sent, key+"_commit" (the other name clients send for
// the same object); h also gets the key used.
func withCommit(key string, h func(rq *req, in *wire.Body, key string) error) echo.HandlerFunc {
	return handle(false, func(rq *req) error {
		k := key
		if !rq.b.Has(k) && rq.b.Has(k+"_commit") {
			k += "_commit"
		}
		in := rq.b.Require(k)
		if err := wire.ErrOf(rq.b); err != nil {
			return err
		}
		return h(rq, in, k)
	})
}

// queryID reads the optional UUID ?<name>= (a forced id, a fork's source);
// a malformed one is a 422 naming it.
func queryID(c echo.Context, name string) (*uuid.UUID, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return nil, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, wire.FieldInvalid("Input should be a valid UUID", raw, "query", name)
	}
	return &id, nil
}

// sendOne answers err, or {"count": 1, key: render(v)}, or {"count": 0}
// when v is nil.
func sendOne[T any](c echo.Context, key string, v *T, err error, render func(*T) *wire.Obj) error {
	if err != nil {
		return err
	}
	if v == nil {
		return send(c, wire.Envelope(key, nil))
	}
	return send(c, wire.Envelope(key, render(v)))
}

// renderAll renders each of xs.
func renderAll[T any](xs []T, render func(*T) *wire.Obj) []json.RawMessage {
	items := make([]json.RawMessage, len(xs))
	for i := range xs {
		items[i] = render(&xs[i]).Done()
	}
	return items
}
