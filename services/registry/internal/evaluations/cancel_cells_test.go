package evaluations_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
)

// testCancelMarksUnrunCells: a run cancelled by its worker (a budget
// reached) has its cells that never ran read cancelled, not pending:
// those handed back pending and those never claimed (absent) alike, and
// so do their scenarios; done cells and a cell still in flight are left
// as they are. Started again, its cancelled cells are pending again, for
// the workers to claim.
func testCancelMarksUnrunCells(t *testing.T, w *world) {
	r := w.run(t, ev.Run{Data: ev.RunData{Steps: steps(false)}, Flags: ev.RunFlags{IsActive: true}, Status: ev.Running})
	ss := w.scenarios(t, r.ID, 4)
	cell := func(s ev.Scenario, step string, st ev.Status) ev.Result {
		return ev.Result{RunID: r.ID, ScenarioID: s.ID, StepKey: step, Status: st}
	}
	_, err := w.svc.UpsertResults(ctx, w.sc, []ev.Result{
		cell(ss[0], "testset-a", ev.Success), cell(ss[0], "application-a", ev.Success), cell(ss[0], "evaluator-a", ev.Success), // done
		cell(ss[1], "testset-a", ev.Success), cell(ss[1], "application-a", ev.Pending), // handed back, its evaluator never claimed
		cell(ss[2], "testset-a", ev.Success),                                           // never claimed
		cell(ss[3], "testset-a", ev.Success), cell(ss[3], "application-a", ev.Running), // in flight
	})
	require.NoError(t, err)
	rid := uuid.MustParse(r.ID)
	got, err := w.svc.Cancel(ctx, w.sc, rid, json.RawMessage(`{"type":"budget_exceeded"}`))
	require.NoError(t, err)
	assert.Equal(t, ev.Cancelled, got.Status)

	cells := func() map[[2]string]ev.Status {
		t.Helper()
		page, err := w.svc.QueryResults(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{rid}})
		require.NoError(t, err)
		out := map[[2]string]ev.Status{}
		for _, x := range page.Items {
			out[[2]string{x.ScenarioID, x.StepKey}] = x.Status
		}
		return out
	}
	scenarios := func() map[string]ev.Status {
		t.Helper()
		page, err := w.svc.QueryScenarios(ctx, w.sc, ev.Filter{RunIDs: []uuid.UUID{rid}})
		require.NoError(t, err)
		out := map[string]ev.Status{}
		for _, x := range page.Items {
			out[x.ID] = x.Status
		}
		return out
	}
	c := cells()
	for _, step := range []string{"testset-a", "application-a", "evaluator-a"} {
		assert.Equal(t, ev.Success, c[[2]string{ss[0].ID, step}], "a done cell is kept")
	}
	assert.Equal(t, ev.Cancelled, c[[2]string{ss[1].ID, "application-a"}], "a cell handed back pending")
	assert.Equal(t, ev.Cancelled, c[[2]string{ss[1].ID, "evaluator-a"}], "a cell never claimed")
	assert.Equal(t, ev.Cancelled, c[[2]string{ss[2].ID, "application-a"}])
	assert.Equal(t, ev.Cancelled, c[[2]string{ss[2].ID, "evaluator-a"}])
	assert.Equal(t, ev.Success, c[[2]string{ss[2].ID, "testset-a"}])
	assert.Equal(t, ev.Running, c[[2]string{ss[3].ID, "application-a"}], "a cell in flight finishes and writes its own result")
	assert.Equal(t, ev.Cancelled, c[[2]string{ss[3].ID, "evaluator-a"}])
	assert.Len(t, c, 12, "every expected cell of every scenario: 4 inputs, 4 written by workers, 4 inserted")
	sc := scenarios()
	assert.Equal(t, ev.Success, sc[ss[0].ID])
	assert.Equal(t, ev.Cancelled, sc[ss[1].ID])
	assert.Equal(t, ev.Cancelled, sc[ss[2].ID])
	assert.Equal(t, ev.Pending, sc[ss[3].ID], "a cell still running")

	// The cell in flight ends: its scenario reads cancelled (its evaluator did not run).
	_, err = w.svc.UpsertResults(ctx, w.sc, []ev.Result{cell(ss[3], "application-a", ev.Success)})
	require.NoError(t, err)
	assert.Equal(t, ev.Cancelled, scenarios()[ss[3].ID])
	settled, _, err := w.svc.Settle(ctx, w.sc, rid)
	require.NoError(t, err)
	assert.Equal(t, ev.Cancelled, settled.Status)

	// Started again (with a higher budget): what was cancelled is pending.
	require.NoError(t, w.svc.ReopenCells(ctx, w.sc, rid))
	c = cells()
	assert.Equal(t, ev.Pending, c[[2]string{ss[1].ID, "application-a"}])
	assert.Equal(t, ev.Pending, c[[2]string{ss[2].ID, "evaluator-a"}])
	assert.Equal(t, ev.Success, c[[2]string{ss[3].ID, "application-a"}])
	sc = scenarios()
	assert.Equal(t, ev.Success, sc[ss[0].ID])
	assert.Equal(t, ev.Pending, sc[ss[1].ID])
	assert.Equal(t, ev.Pending, sc[ss[3].ID])
}
