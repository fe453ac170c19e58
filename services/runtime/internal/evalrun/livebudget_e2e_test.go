package evalrun_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveRunDailyBudget: a live run's data.budget is per day
// (RUNTIME_EVAL_BUDGET_DAY, shortened here to 45 s so a day boundary comes
// within the test; periods start at the epoch as UTC days do): once the
// cells of the day's windows cost the budget, the run scores no more
// windows that day and says so under meta.pause, staying running and
// active (not cancelled); the next day it scores again and the pause is
// cleared.
func TestLiveRunDailyBudget(t *testing.T) {
	const day = 45 * time.Second
	s := startStackWith(t, []string{"REGISTRY_EVAL_LIVE_INTERVAL=2s"}, "RUNTIME_EVAL_WINDOW_GRACE=1s",
		"RUNTIME_EVAL_BUDGET_DAY="+day.String())
	key := s.account(t, "livebudget@example.com")
	_, appRev := s.workflow(t, key, "application", "app", completion)
	qRev := s.saveQuery(t, key, "live")
	// An evaluator whose every cell calls the model (so costs something).
	_, judgeRev := s.workflow(t, key, "evaluator", "judge", completion)
	const budget = 1e-9 // reached by the first cell
	id := s.evaluate(t, key, map[string]any{"query_steps": []any{qRev}, "evaluator_steps": map[string]any{judgeRev: "auto"},
		"budget": budget, "model_cache": false}, map[string]any{"is_live": true})

	// scored reports whether the trace was taken into a window and its
	// evaluator cell succeeded.
	scored := func(traceID string) bool {
		t.Helper()
		run := s.run(t, key, id)
		cells := byStep(s.results(t, key, id))
		scen := ""
		for _, c := range cells[stepKey(t, run, "input", "")] {
			if c.TraceID == traceID {
				scen = c.ScenarioID
			}
		}
		for _, c := range cells[stepKey(t, run, "annotation", judgeRev)] {
			if scen != "" && c.ScenarioID == scen && c.Status == "success" {
				return true
			}
		}
		return false
	}
	taken := func(traceID string) bool {
		t.Helper()
		for _, c := range s.results(t, key, id) {
			if c.TraceID == traceID {
				return true
			}
		}
		return false
	}
	pause := func() map[string]any {
		t.Helper()
		meta, _ := s.run(t, key, id)["meta"].(map[string]any)
		p, _ := meta["pause"].(map[string]any)
		return p
	}
	waitFor := func(what string, until time.Time, ok func() bool) {
		t.Helper()
		for !ok() {
			require.True(t, time.Now().Before(until), "%s", what)
			time.Sleep(300 * time.Millisecond)
		}
	}

	// Start at the beginning of a day, past the first window (a window
	// counts on the day it starts).
	start := time.Now().UTC().Truncate(day).Add(day)
	time.Sleep(time.Until(start) + 3*time.Second)
	end := start.Add(day)

	a := s.invokeApp(t, key, appRev, "France")
	waitFor("the day's first trace was never scored", end, func() bool { return scored(a) })
	waitFor("the run never paused on its daily budget", end, func() bool { return pause() != nil })
	p := pause()
	assert.Equal(t, "daily_budget_reached", p["type"])
	assert.Equal(t, fmt.Sprintf("daily budget of $0.000000001 reached; resumes at %s UTC", end.Format("15:04:05")), p["message"])
	assert.Equal(t, end.Format(time.RFC3339), p["resumes_at"])
	run := s.run(t, key, id)
	assert.Equal(t, "running", run["status"], "paused, not cancelled")
	assert.Equal(t, true, run["flags"].(map[string]any)["is_active"])

	// A trace of the same day is not scored: its window passes unscored.
	b := s.invokeApp(t, key, appRev, "Peru")
	time.Sleep(6 * time.Second) // three windows of 2 s and their grace
	require.True(t, time.Now().Before(end), "the machine was too slow to check the paused day within it")
	assert.False(t, taken(b), "a window of a day over its budget is not scored")

	// The next day: scored again, the pause cleared.
	time.Sleep(time.Until(end) + 3*time.Second)
	c := s.invokeApp(t, key, appRev, "Chile")
	waitFor("the next day's trace was never scored", end.Add(day), func() bool { return scored(c) })
	waitFor("the pause was never cleared", end.Add(day), func() bool { return pause() == nil })
	assert.False(t, taken(b), "the paused day's window is not scored later")
	assert.Equal(t, "running", s.run(t, key, id)["status"])
}
