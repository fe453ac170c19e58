package httpapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// simpleQueueAPI serves /simple/queues: binding and
// rendering over simpleevals.SimpleQueues.
type simpleQueueAPI struct{ uc *simpleevals.SimpleQueues }

func (a simpleQueueAPI) route(e *echo.Echo) {
	p := "/simple/queues"
	e.POST(p, handle(false, a.create))
	e.DELETE(p, handle(false, a.delete))
	e.POST(p+"/query", handle(false, a.query))
	e.GET(p+"/:id", handle(true, a.fetch))
	e.DELETE(p+"/:id", handle(true, a.deleteOne))
	e.POST(p+"/:id/scenarios/query", handle(true, a.scenarios))
	e.POST(p+"/:id/traces", handle(true, a.add(simpleevals.QueueTraces, "trace_ids")))
	e.POST(p+"/:id/testcases", handle(true, a.add(simpleevals.QueueTestcases, "testcase_ids")))
}

func sendQueue(c echo.Context, q *simpleevals.SimpleQueue, err error) error {
	if err != nil {
		return err
	}
	if q == nil {
		return simpleJSON(c, http.StatusOK, map[string]any{"count": 0})
	}
	return simpleJSON(c, http.StatusOK, map[string]any{"count": 1, "queue": q})
}

func (a simpleQueueAPI) create(rq *req) error {
	in := rq.b.Require("queue")
	if err := wire.ErrOf(rq.b); err != nil {
		return err
	}
	_, raw := rq.b.Raw("queue")
	q, err := simpleevals.ParseSimpleQueue(raw, in.Loc()...)
	if err != nil {
		return err
	}
	out, err := a.uc.Create(rq.ctx, rq.sc, q)
	return sendQueue(rq.c, out, err)
}

func (a simpleQueueAPI) fetch(rq *req) error {
	q, err := a.uc.Fetch(rq.ctx, rq.sc, rq.id)
	return sendQueue(rq.c, q, err)
}

// simpleIDs reads the list of UUIDs at key (required).
func simpleIDs(b *wire.Body, key string) ([]uuid.UUID, error) {
	var out []uuid.UUID
	if !b.Decode(&out, "Input should be a list of UUIDs", key) {
		if err := wire.ErrOf(b); err != nil {
			return nil, err
		}
		return nil, wire.FieldMissing("body", key)
	}
	if len(out) > 10000 {
		return nil, wire.FieldInvalid("List should have at most 10000 items", nil, "body", key)
	}
	return out, nil
}

func (a simpleQueueAPI) delete(rq *req) error {
	qs, err := simpleIDs(rq.b, "queue_ids")
	if err != nil {
		return err
	}
	done, err := a.uc.Delete(rq.ctx, rq.sc, qs)
	if err != nil {
		return err
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": len(done), "queue_ids": done})
}

// deleteOne serves DELETE /simple/queues/{id}: {count, queue_id}, or
// {count: 0} when there is no such queue.
func (a simpleQueueAPI) deleteOne(rq *req) error {
	done, err := a.uc.DeleteOne(rq.ctx, rq.sc, rq.id)
	if err != nil {
		return err
	}
	if done == nil {
		return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 0})
	}
	return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 1, "queue_id": done})
}

// query reads {queue?: {ids?, name?, tags?, meta?, run_id?, kind?,
// user_id?}, windowing?}; kind and user_id are the compatible web app's
// filters (SimpleQueueFilter).
func (a simpleQueueAPI) query(rq *req) error {
	b := rq.b
	f := evaluations.Filter{Windowing: b.Windowing()}
	var more simpleevals.SimpleQueueFilter
	if q := b.Sub("queue"); q != nil {
		f.Name, f.Tags, f.Meta = q.Str("name"), q.Object("tags"), q.Object("meta")
		if k := q.Str("kind"); k != nil {
			switch *k {
			case simpleevals.QueueTraces, simpleevals.QueueTestcases, simpleevals.QueueQueries, simpleevals.QueueTestsets:
				more.Kind = *k
			default:
				return wire.FieldInvalid("Input should be 'traces', 'testcases', 'queries' or 'testsets'", *k, "body", "queue", "kind")
			}
		}
		more.User = q.ID("user_id")
		var xs []uuid.UUID
		if q.Decode(&xs, "Input should be a list of UUIDs", "ids") {
			f.IDs = xs
		}
		if id := q.ID("run_id"); id != nil {
			f.RunIDs = []uuid.UUID{*id}
		}
		b.Adopt(q)
	}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	qs, p, err := a.uc.Query(rq.ctx, rq.sc, f, more)
	if err != nil {
		return err
	}
	out := map[string]any{"count": len(qs), "queues": qs}
	if p.Next != nil {
		out["windowing"] = p.Next
	}
	return simpleJSON(rq.c, http.StatusOK, out)
}

// scenarios reads {user_id?, scenario?: {status?, statuses?}, windowing?}:
// with user_id, only what the queue assigns to that user.
func (a simpleQueueAPI) scenarios(rq *req) error {
	b := rq.b
	user := b.ID("user_id")
	f := evaluations.Filter{Windowing: b.Windowing()}
	if s := b.Sub("scenario"); s != nil {
		if st := s.Str("status"); st != nil {
			f.Statuses = []evaluations.Status{evaluations.Status(*st)}
		}
		var sts []evaluations.Status
		if s.Decode(&sts, "Input should be a list of statuses", "statuses") {
			f.Statuses = append(f.Statuses, sts...)
		}
		b.Adopt(s)
	}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	for i, st := range f.Statuses {
		if !simpleStatusOK(st) {
			return wire.FieldInvalid("Input should be a status", string(st), "body", "scenario", "statuses", i)
		}
	}
	p, err := a.uc.Scenarios(rq.ctx, rq.sc, rq.id, user, f)
	if err != nil {
		return err
	}
	if p == nil {
		return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": 0, "scenarios": []any{}})
	}
	out := map[string]any{"count": len(p.Items), "scenarios": p.Items}
	if p.Next != nil {
		out["windowing"] = p.Next
	}
	return simpleJSON(rq.c, http.StatusOK, out)
}

func simpleStatusOK(st evaluations.Status) bool {
	for _, s := range evaluations.Statuses {
		if s == st {
			return true
		}
	}
	return false
}

func (a simpleQueueAPI) add(kind, key string) func(*req) error {
	return func(rq *req) error {
		var xs []string
		if !rq.b.Decode(&xs, "Input should be a list of strings", key) {
			if err := wire.ErrOf(rq.b); err != nil {
				return err
			}
			return wire.FieldMissing("body", key)
		}
		ss, err := a.uc.AddItems(rq.ctx, rq.sc, rq.id, kind, xs)
		if err != nil {
			return err
		}
		return simpleJSON(rq.c, http.StatusOK, map[string]any{"count": len(ss), "scenarios": ss})
	}
}
