package evalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

// DailyBudgetPauseType is meta.pause.type of a live run whose spend of the
// day reached data.budget: it scores no window until the next day.
const DailyBudgetPauseType = "daily_budget_reached"

// budgetDay is the day a live run's budget is per (Executor.BudgetDay).
func (x *Executor) budgetDay() time.Duration {
	if x.BudgetDay <= 0 {
		return 24 * time.Hour
	}
	return x.BudgetDay
}

func (x *Executor) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// dailyBudgetReached checks a live run's data.budget before a window is
// scored: a live run never ends, so its budget is per UTC day (periods of
// BudgetDay from the epoch: midnight UTC for a day), not in total. The
// day's spend is what the run's cells of windows starting that day cost.
// When it has reached the budget, the run's meta.pause says so (once per
// day) and true is returned: the window is not scored, and the run stays
// running and active. A run whose day is under its budget again has its
// pause cleared. Cells of windows already handed out finish, so a day
// overshoots by at most one window's cells.
func (j *jobRun) dailyBudgetReached(ctx context.Context) (bool, error) {
	run := j.plan.run
	if run == nil || !run.Flags.IsLive || run.Data.Budget == nil {
		return false, nil
	}
	limit := *run.Data.Budget
	day := j.x.budgetDay()
	start := j.x.now().UTC().Truncate(day)
	end := start.Add(day)
	var paused struct {
		Pause *struct {
			Type      string    `json:"type"`
			ResumesAt time.Time `json:"resumes_at"`
		} `json:"pause"`
	}
	if len(run.Meta) > 0 {
		_ = json.Unmarshal(run.Meta, &paused)
	}
	// Only the day's cells are read: a live run lives for months, and
	// reading all its cells on every window would grow without bound.
	rs, err := j.x.Client.Results(ctx, j.sc, registryclient.ResultFilter{RunID: j.job.RunID, From: start, Before: end})
	if err != nil {
		return false, err
	}
	var spent float64
	for i := range rs {
		spent += cellCost(rs[i].Meta)
	}
	if spent >= limit {
		if p := paused.Pause; p == nil || p.Type != DailyBudgetPauseType || !p.ResumesAt.Equal(end) {
			resumes := end.Format("15:04:05") + " UTC"
			if day == 24*time.Hour {
				resumes = "00:00 UTC"
			}
			why := map[string]any{"type": DailyBudgetPauseType, "budget": limit, "spent": spent, "day": start, "resumes_at": end,
				"message": fmt.Sprintf("daily budget of $%s reached; resumes at %s", usd(limit), resumes)}
			if err := j.x.Client.Pause(ctx, j.sc, j.job.RunID, why); err != nil {
				return false, fmt.Errorf("evalrun: pause run %s over its daily budget: %w", j.job.RunID, err)
			}
		}
		return true, nil
	}
	if p := paused.Pause; p != nil && p.Type == DailyBudgetPauseType {
		if err := j.x.Client.Pause(ctx, j.sc, j.job.RunID, nil); err != nil {
			return false, fmt.Errorf("evalrun: resume run %s: %w", j.job.RunID, err)
		}
	}
	return false, nil
}
