package evalrun_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// budgetStopsTheRun runs on TestCachedRunReusesTraces's platform, in a
// project of its own: a run's cells record what their model calls cost
// (meta.model_calls.cost, by the price table); a run whose data.budget
// is about three calls' cost is cancelled once its spend reaches it,
// with meta.stop naming the budget, and makes no more calls than the
// budget allows plus the one cell in flight (batch_size 1).
func budgetStopsTheRun(t *testing.T, s *stack) {
	key := s.account(t, "budget@example.com")
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	steps := func(tsRev string) map[string]any {
		return map[string]any{"testset_steps": []any{tsRev}, "application_steps": []any{appRev},
			"evaluator_steps": map[string]any{evRev: "auto"}, "model_cache": false,
			"concurrency": map[string]any{"batch_size": 1}}
	}

	// One call's cost, as a cell records it.
	one := s.testset(t, key, "one", countries(1))
	id := s.evaluate(t, key, steps(one.revisionID), nil)
	require.Equal(t, "success", s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure", "cancelled")["status"])
	var perCall float64
	for _, c := range s.results(t, key, id) {
		perCall += c.Meta.ModelCalls.Cost
	}
	require.Greater(t, perCall, 0.0, "a call to gpt-4o-mini costs something by the price table")

	// A budget of 2.5 calls over 10 testcases.
	budget := 2.5 * perCall
	ten := s.testset(t, key, "ten", countries(10))
	data := steps(ten.revisionID)
	data["budget"] = budget
	// The estimate, before and in the create, is the documented formula:
	// (template + testcase characters) / 4 prompt tokens, 256 completion
	// tokens, at gpt-4o-mini's $0.15 / $0.60 per million tokens.
	tmpl := len("You answer in one word.") + len("What is the capital of {{country}}?")
	var wantPrompt int
	for _, tc := range countries(10) {
		chars := tmpl + len(tc["country"].(string)) + len(tc["expected"].(string))
		wantPrompt += (chars + 3) / 4
	}
	wantCost := float64(wantPrompt)*0.15e-6 + 10*256*0.60e-6
	checkEstimate := func(est map[string]any) {
		t.Helper()
		require.NotNil(t, est, "an estimate")
		assert.Equal(t, 20.0, est["cells"], "10 application and 10 evaluator cells")
		assert.Equal(t, 10.0, est["model_calls"], "the mock evaluator calls no model")
		assert.Equal(t, float64(wantPrompt), est["prompt_tokens"])
		assert.Equal(t, 2560.0, est["completion_tokens"])
		assert.InDelta(t, wantCost, est["cost"], 1e-12)
		assert.Equal(t, []any{"gpt-4o-mini"}, est["models"])
		assert.NotEmpty(t, est["assumptions"])
	}
	dry := s.ok(t, "POST", "/api/simple/evaluations/estimate", key, map[string]any{"evaluation": map[string]any{"data": data}}).json(t)
	checkEstimate(dry["estimate"].(map[string]any))

	before := appCalls(s.llm)
	created := s.ok(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{"name": "budgeted", "data": data}}).json(t)
	est, _ := created["estimate"].(map[string]any)
	checkEstimate(est)
	id = created["evaluation"].(map[string]any)["id"].(string)
	r := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure", "cancelled")
	made := appCalls(s.llm) - before
	require.Equal(t, "cancelled", r["status"], "a run reaching its budget is cancelled")
	assert.Equal(t, false, r["flags"].(map[string]any)["is_active"])
	stop, _ := r["meta"].(map[string]any)["stop"].(map[string]any)
	require.NotNil(t, stop, "meta.stop says why: %v", r["meta"])
	assert.Equal(t, "budget_exceeded", stop["type"])
	assert.True(t, strings.HasPrefix(stop["message"].(string), "budget of $"), "%v", stop["message"])
	assert.GreaterOrEqual(t, stop["spent"].(float64), budget)
	// The spend reaches 2.5 calls' cost at the third call (testcases'
	// prompts differ by a few characters), plus the one cell in flight.
	allowed := int(math.Ceil(budget/perCall)) + 1
	t.Logf("budget $%g (2.5 calls of $%g; estimate $%g for 10): %d calls made, %d allowed; %v", budget, perCall, wantCost, made, allowed, stop["message"])
	assert.LessOrEqual(t, made, allowed, "calls made past the budget")
	assert.GreaterOrEqual(t, made, 2, "the run spent up to its budget")
	assert.Equal(t, 2.5*perCall, s.run(t, key, id)["data"].(map[string]any)["budget"])
	// The cells the budget left unrun read cancelled, not pending (the
	// run will not run them), and every cell of the 10 scenarios is
	// there; those that ran read success.
	byStatus := map[string]int{}
	for _, c := range s.results(t, key, id) {
		byStatus[c.Status]++
	}
	assert.Zero(t, byStatus["pending"], "no cell of a cancelled run reads pending: %v", byStatus)
	assert.Equal(t, 30, byStatus["success"]+byStatus["cancelled"], "10 input, 10 application and 10 evaluator cells: %v", byStatus)
	assert.GreaterOrEqual(t, byStatus["cancelled"], 2*(10-allowed), "the application cells not run and their evaluators: %v", byStatus)
	for _, sc := range s.scenarios(t, key, id) {
		assert.NotEqual(t, "pending", sc["status"], "scenario %v", sc["id"])
	}

	// A budget that is not a positive amount is refused, naming the field.
	data["budget"] = -1
	bad := s.do(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{"data": data}})
	assert.Equal(t, 422, bad.status, "%s", bad.body)
	assert.Contains(t, string(bad.body), "budget")
}
