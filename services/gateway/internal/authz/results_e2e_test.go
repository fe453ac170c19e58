package authz_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/roles"
)

// TestAnnotatorWritesHumanStepsOnly: an annotator records the results of
// human steps, never those of automatic ones (a falsified run), and every
// result write is in the audit log (evaluations.mayWrite, authz.Table).
func TestAnnotatorWritesHumanStepsOnly(t *testing.T) {
	e := start(t)
	annotatorID, annotator := e.member(t, roles.Annotator)
	_, editor := e.member(t, roles.Editor)
	steps := []any{
		map[string]any{"key": "application-a", "type": "invocation", "origin": "auto"},
		map[string]any{"key": "evaluator-a", "type": "annotation", "origin": "auto"},
		map[string]any{"key": "evaluator-c", "type": "annotation", "origin": "custom"},
		map[string]any{"key": "evaluator-h", "type": "annotation", "origin": "human"},
	}
	run := e.ok(t, "POST", "/api/evaluations/runs", editor, map[string]any{"runs": []any{map[string]any{"name": "r", "data": map[string]any{"steps": steps}}}})
	runID := run["runs"].([]any)[0].(map[string]any)["id"].(string)
	scen := e.ok(t, "POST", "/api/evaluations/scenarios", editor, map[string]any{"scenarios": []any{map[string]any{"run_id": runID}}})
	scenID := scen["scenarios"].([]any)[0].(map[string]any)["id"].(string)
	result := func(step, status string) map[string]any {
		return map[string]any{"results": []any{map[string]any{"run_id": runID, "scenario_id": scenID, "step_key": step, "status": status,
			"trace_id": "0123456789abcdef0123456789abcdef", "error": map[string]any{"message": "forged"}}}}
	}
	e.ok(t, "POST", "/api/evaluations/results", editor, result("evaluator-a", "success"))

	for _, step := range []string{"application-a", "evaluator-a", "evaluator-c"} {
		for _, method := range []string{"POST", "PUT", "PATCH"} {
			a := e.do(t, method, "/api/evaluations/results", annotator, result(step, "failure"))
			require.Equal(t, http.StatusForbidden, a.status, "%s %s: %s", method, step, a.body)
			d := a.json(t)["detail"].(map[string]any)
			assert.Equal(t, "run_evaluation", d["permission"])
			assert.Equal(t, "annotator", d["role"])
			assert.Equal(t, step, d["value"])
		}
	}
	q := e.ok(t, "POST", "/api/evaluations/results/query", editor, map[string]any{"result": map[string]any{"run_id": runID}})
	for _, x := range q["results"].([]any) {
		r := x.(map[string]any)
		assert.Equal(t, "success", r["status"], "the automatic step's result is unchanged: %v", r)
	}
	// the human step is the annotator's to write
	e.ok(t, "POST", "/api/evaluations/results", annotator, result("evaluator-h", "success"))
	// and so is an annotation linked under a key the run does not declare
	// (the compatible web app's "<invocation step key>.<evaluator slug>")
	e.ok(t, "POST", "/api/evaluations/results", annotator, result("application-a.my-rubric", "success"))

	// every result write is audited, with its author
	page := e.ok(t, "GET", "/api/audit?action=POST%20/evaluations/results", e.owner, nil)
	require.Equal(t, 3.0, page["count"], "%v", page)
	assert.Equal(t, annotatorID.String(), page["entries"].([]any)[0].(map[string]any)["actor_user_id"])
}
