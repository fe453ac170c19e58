package evalrun_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHookApplication: a custom hook application is called over HTTP by
// the worker (POST <url>/invoke with the testcase's inputs and the
// testcase), and its answer is what the evaluators read.
func TestHookApplication(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		in, _ := b["inputs"].(map[string]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"answer": "capital of " + in["country"].(string)})
	}))
	defer hook.Close()

	s := startStack(t, "RUNTIME_ALLOW_PRIVATE_EGRESS=true")
	key := s.account(t, "hook@example.com")
	ts := s.testset(t, key, "capitals", countries(2))
	_, appRev := s.workflow(t, key, "application", "hooked", map[string]any{"uri": "agenta:custom:hook:v0", "url": hook.URL})
	// reflect scores 1 only when the outputs it is given are a non-empty
	// object: the hook's answer.
	_, evRev := s.workflow(t, key, "evaluator", "reflect", mock("reflect", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"], "%v", s.results(t, key, id))

	mu.Lock()
	require.Len(t, bodies, 2, "one hook call per app cell")
	for _, b := range bodies {
		in := b["inputs"].(map[string]any)
		assert.Contains(t, ts.testcaseIDs, in["testcase_id"])
		assert.NotNil(t, b["testcase"])
	}
	mu.Unlock()
	cells := byStep(s.results(t, key, id))
	for _, c := range cells[stepKey(t, run, "invocation", "")] {
		root := s.rootSpan(t, key, c.TraceID)
		assert.Contains(t, ag(root, "data.outputs.answer"), "capital of ")
	}
	evs := cells[stepKey(t, run, "annotation", evRev)]
	require.Len(t, evs, 2)
	for _, c := range evs {
		root := s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, 1.0, ag(root, "data.outputs.score"), "the evaluator was given the hook's answer")
	}
}
