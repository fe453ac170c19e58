package evalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

// BudgetStopType is meta.stop.type of a run cancelled because its model
// calls reached data.budget.
const BudgetStopType = "budget_exceeded"

// budget holds a run's spend against its data.budget (USD, by the price
// table) for one job: spent is read from the run's written results at
// the start of each pass (all its jobs' cells), pass adds the cells this
// job finished since. Once reached, the job starts no more cells; those
// already running finish, so a run overshoots by at most its cells in
// flight (batch_size per job).
type budget struct {
	limit float64
	mu    sync.Mutex
	spent float64
}

// newBudget is the run's budget, nil without one. A live run's budget is
// per day and checked before each window (dailyBudgetReached), not here:
// cancelling an online evaluation for a day's spend would stop it for
// good.
func newBudget(run *evaluation.Run) *budget {
	if run == nil || run.Data.Budget == nil || run.Flags.IsLive {
		return nil
	}
	return &budget{limit: *run.Data.Budget}
}

// reset sets the spend read from the written results.
func (b *budget) reset(spent float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.spent = spent
	b.mu.Unlock()
}

// add counts a finished cell's cost (its result's meta.model_calls.cost).
func (b *budget) add(meta json.RawMessage) {
	if b == nil {
		return
	}
	c := cellCost(meta)
	b.mu.Lock()
	b.spent += c
	b.mu.Unlock()
}

// reached reports whether the spend has reached the limit (never for a
// run without a budget).
func (b *budget) reached() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent >= b.limit
}

// stop is the run's meta.stop once the budget is reached.
func (b *budget) stop() map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]any{"type": BudgetStopType, "budget": b.limit, "spent": b.spent,
		"message": fmt.Sprintf("budget of $%s reached: $%s spent", usd(b.limit), usd(b.spent))}
}

// usd renders an amount in dollars: cents from a dime up, else three
// significant digits, never in exponent form (a budget of $0.000001
// stays readable).
func usd(v float64) string {
	if v >= 0.1 || v == 0 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// cellCost is what a result's model calls cost (meta.model_calls.cost).
func cellCost(meta json.RawMessage) float64 {
	if len(meta) == 0 {
		return 0
	}
	var m struct {
		Calls *struct {
			Cost float64 `json:"cost"`
		} `json:"model_calls"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Calls == nil {
		return 0
	}
	return m.Calls.Cost
}

// runSpend adds up the cost of the run's written results (every job's).
func (j *jobRun) runSpend(ctx context.Context) (float64, error) {
	rs, err := j.x.Client.Results(ctx, j.sc, registryclient.ResultFilter{RunID: j.job.RunID})
	if err != nil {
		return 0, err
	}
	var sum float64
	for i := range rs {
		sum += cellCost(rs[i].Meta)
	}
	return sum, nil
}

// overBudget re-reads the run's spend; when it has reached the budget the
// run is cancelled with the reason under meta.stop and true is returned.
func (j *jobRun) overBudget(ctx context.Context, b *budget) (bool, error) {
	if b == nil {
		return false, nil
	}
	spent, err := j.runSpend(ctx)
	if err != nil {
		return false, err
	}
	b.reset(spent)
	if !b.reached() {
		return false, nil
	}
	if err := j.x.Client.Cancel(ctx, j.sc, j.job.RunID, b.stop()); err != nil {
		return false, fmt.Errorf("evalrun: cancel run %s over its budget: %w", j.job.RunID, err)
	}
	j.mu.Lock()
	j.active = false
	j.mu.Unlock()
	return true, nil
}
