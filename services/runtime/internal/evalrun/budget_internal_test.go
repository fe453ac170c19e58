package evalrun

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/evaluation"
)

// TestUSD: the stop reason's amounts read as dollars, never in exponent
// form (the console's run page shows them as they are).
func TestUSD(t *testing.T) {
	for v, want := range map[float64]string{0.5: "0.50", 12.345: "12.35", 0: "0.00", 0.000001: "0.000001", 0.0000015234: "0.00000152", 0.0123: "0.0123"} {
		assert.Equal(t, want, usd(v), "%g", v)
	}
	b := &budget{limit: 0.5, spent: 0.52}
	assert.Equal(t, "budget of $0.50 reached: $0.52 spent", b.stop()["message"])
	b.add(json.RawMessage(`{"worker":"w","model_calls":{"made":1,"cost":0.01}}`))
	assert.InDelta(t, 0.53, b.spent, 1e-12)
	assert.True(t, b.reached())
	var none *budget
	assert.False(t, none.reached(), "a run without a budget never reaches it")
}

// TestLiveRunBudgetIsNotATotal: a live run's budget is not the total
// spend this check adds up (it is per day: dailyBudgetReached,
// TestLiveRunDailyBudget), so this check leaves it alone rather than
// cancelling the online evaluation.
func TestLiveRunBudgetIsNotATotal(t *testing.T) {
	b := 0.01
	run := &evaluation.Run{}
	run.Data.Budget = &b
	assert.NotNil(t, newBudget(run))
	run.Flags.IsLive = true
	assert.Nil(t, newBudget(run))
}
