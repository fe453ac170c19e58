package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/google/uuid"
)

// TestEvaluationPauseRoute: the worker records why a live run scores no
// window for now (its daily budget reached) under meta.pause, keeping its
// status, is_active and other meta, and clears it with null; a pause that
// is not an object is a 422 naming it, an unknown run a 404.
func TestEvaluationPauseRoute(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true, "is_live": true},
		"status": "running", "meta": m{"k": "v"}})["id"])
	why := m{"type": "daily_budget_reached", "message": "daily budget of $0.50 reached; resumes at 00:00 UTC"}
	p := s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/pause", m{"pause": why})
	run := obj(t, p, "run")
	assert.Equal(t, "running", run["status"])
	assert.Equal(t, true, obj(t, p, "run", "flags")["is_active"])
	assert.Equal(t, "v", obj(t, p, "run", "meta")["k"])
	assert.Equal(t, "daily_budget_reached", obj(t, p, "run", "meta", "pause")["type"])

	p = s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/pause", m{"pause": nil})
	meta := obj(t, p, "run", "meta")
	assert.NotContains(t, meta, "pause", "null clears it")
	assert.Equal(t, "v", meta["k"])

	res := s.do(t, "POST", "/internal/evaluations/runs/"+rid+"/pause", m{"pause": "soon"})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.body))
	assert.Contains(t, string(res.body), "pause")
	res = s.do(t, "POST", "/internal/evaluations/runs/"+uuid.NewString()+"/pause", m{"pause": nil})
	assert.Equal(t, http.StatusNotFound, res.status, string(res.body))
}
