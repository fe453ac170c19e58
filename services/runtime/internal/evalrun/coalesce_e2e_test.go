package evalrun_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identicalCallsInFlightCoalesce runs on TestCachedRunReusesTraces's
// platform, in a project of its own: two cells of one run whose model
// calls are identical (two testcases asking the same question), run at
// once against a slow model, make one model call; the other cell is
// answered with its answer, counted as cached.
func identicalCallsInFlightCoalesce(t *testing.T, s *stack) {
	key := s.account(t, "coalesce@example.com")
	same := countries(1)[0]
	ts := s.testset(t, key, "twice", []map[string]any{same, same})
	_, appRev := s.workflow(t, key, "application", "app", completion)
	s.llm.SetDelay(500 * time.Millisecond) // both cells' calls are in flight together
	defer s.llm.SetDelay(0)
	before := appCalls(s.llm)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"concurrency": map[string]any{"batch_size": 2}}, nil)
	r := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure", "cancelled")
	require.Equal(t, "success", r["status"])
	assert.Equal(t, 1, appCalls(s.llm)-before, "one model call for two identical calls in flight")
	var made, cached int
	app := byStep(s.results(t, key, id))[stepKey(t, r, "invocation", "")]
	require.Len(t, app, 2)
	for _, c := range app {
		assert.Equal(t, "success", c.Status)
		made += c.Meta.ModelCalls.Made
		cached += c.Meta.ModelCalls.Cached
	}
	assert.Equal(t, 1, made, "the call made")
	assert.Equal(t, 1, cached, "the call answered with the other's answer")
	a, b := s.rootSpan(t, key, app[0].TraceID), s.rootSpan(t, key, app[1].TraceID)
	assert.Equal(t, ag(a, "data.outputs"), ag(b, "data.outputs"))
}
