package evalrun_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTestsetApplicationEvaluators runs the main topology to success: one
// scenario per testcase, the input cells with their testcase ids, the app
// at repeat 0 only, the auto evaluators at every repeat (exact match
// against the testcase's expected answer, and the mock), the human one
// left pending; every cell's trace is the deterministic one, linked and
// referenced as the compatible platform's runs are (the app's trace refers
// to the testcase, the testset and the app revision; an evaluator's to its
// revision, linked to the app's trace), and an evaluator sees the app's
// outputs, never a sibling's.
func TestTestsetApplicationEvaluators(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "topo@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "capitals-app", completion)
	_, emRev := s.workflow(t, key, "evaluator", "em", exactMatch)
	_, echoRev := s.workflow(t, key, "evaluator", "echo", mock("echo", nil))
	_, humanRev := s.workflow(t, key, "evaluator", "approval", mock("pass", nil))

	id := s.evaluate(t, key, map[string]any{
		"testset_steps":     []any{ts.revisionID},
		"application_steps": []any{appRev},
		"evaluator_steps":   map[string]any{emRev: "auto", echoRev: "auto", humanRev: "human"},
		"repeats":           2,
	}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "running", "errors", "failure")
	// A human step keeps the run open (queue): wait for every auto cell.
	deadline := time.Now().Add(60 * time.Second)
	var cells map[string][]result
	finished := func(rs []result) bool {
		for _, r := range rs {
			if r.Status != "success" && r.Status != "failure" {
				return false
			}
		}
		return len(rs) == 6
	}
	for {
		cells = byStep(s.results(t, key, id))
		if finished(cells[stepKey(t, run, "annotation", emRev)]) && finished(cells[stepKey(t, run, "annotation", echoRev)]) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	inKey, appKey := stepKey(t, run, "input", ""), stepKey(t, run, "invocation", "")
	emKey, echoKey, humanKey := stepKey(t, run, "annotation", emRev), stepKey(t, run, "annotation", echoRev), stepKey(t, run, "annotation", humanRev)

	require.Len(t, s.scenarios(t, key, id), 3)
	require.Len(t, cells[inKey], 6, "an input cell per scenario and repeat")
	tcOf := map[string]string{}
	for _, c := range cells[inKey] {
		assert.Equal(t, "success", c.Status)
		assert.Contains(t, ts.testcaseIDs, c.TestcaseID)
		tcOf[c.ScenarioID] = c.TestcaseID
	}
	require.Len(t, cells[appKey], 3, "the app runs at repeat 0 only")
	appTrace := map[string]string{}
	for _, c := range cells[appKey] {
		assert.Equal(t, "success", c.Status, string(c.Error))
		assert.Equal(t, 0, c.RepeatIdx)
		assert.Len(t, c.TraceID, 32)
		appTrace[c.ScenarioID] = c.TraceID
	}
	require.Len(t, cells[emKey], 6)
	require.Len(t, cells[echoKey], 6)
	assert.Empty(t, cells[humanKey], "a human step is not run")
	for _, c := range append(append([]result{}, cells[emKey]...), cells[echoKey]...) {
		assert.Equal(t, "success", c.Status, string(c.Error))
		assert.NotEqual(t, appTrace[c.ScenarioID], c.TraceID)
	}

	// The app's invocation trace: inputs from the testcase, references to
	// the testcase, the testset and the pinned app revision.
	sc := cells[appKey][0]
	root := s.rootSpan(t, key, sc.TraceID)
	assert.Equal(t, "invocation", root["trace_type"])
	refs := refIDs(root)
	assert.Equal(t, tcOf[sc.ScenarioID], refs["testcase"])
	assert.Equal(t, ts.id, refs["testset"])
	assert.Equal(t, appRev, refs["application_revision"])
	country := ag(root, "data.inputs.country").(string)
	assert.Equal(t, "echo: What is the capital of "+country+"?", ag(root, "data.outputs"))

	// The exact-match evaluator compared the app's outputs with the
	// testcase's expected answer: every one matches.
	for _, c := range cells[emKey] {
		r := s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, "annotation", r["trace_type"])
		assert.Equal(t, true, ag(r, "data.outputs.success"), "exact match of %s", c.ScenarioID)
		assert.Equal(t, emRev, refIDs(r)["evaluator_revision"])
		var links []map[string]any
		b, _ := json.Marshal(r["links"])
		require.NoError(t, json.Unmarshal(b, &links))
		require.Len(t, links, 1)
		assert.Equal(t, appTrace[c.ScenarioID], links[0]["trace_id"])
	}
	// The echo evaluator saw the testcase inputs (with testcase_id) and
	// the app outputs, nothing of the exact-match evaluator.
	for _, c := range cells[echoKey] {
		r := s.rootSpan(t, key, c.TraceID)
		in := ag(r, "data.inputs").(map[string]any)
		assert.Equal(t, tcOf[c.ScenarioID], in["testcase_id"])
		assert.NotContains(t, in, "success")
		assert.NotContains(t, in, "score")
	}
}
