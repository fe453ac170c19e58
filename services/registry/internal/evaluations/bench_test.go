package evaluations_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/migrations"
)

// benchWorld is a run of 1000 scenarios (testset → app → 3 evaluators),
// the speed target, for the per-call cost of what a worker does.
func benchWorld(b *testing.B) (*ev.Service, scope.Scope, ev.Run, []ev.Scenario) {
	pool := pgtest.New(b)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pgtest.Must(b, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log))
	svc := ev.NewService(pgstore.New(pool).Evaluations(), nil, ev.Config{})
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	st := append(steps(false), ev.Step{Key: "evaluator-b", Type: ev.TypeAnnotation, Origin: ev.OriginAuto},
		ev.Step{Key: "evaluator-c", Type: ev.TypeAnnotation, Origin: ev.OriginAuto})
	runs, err := svc.CreateRuns(ctx, sc, []ev.Run{{Data: ev.RunData{Steps: st}, Flags: ev.RunFlags{IsActive: true}}})
	pgtest.Must(b, err)
	in := make([]ev.Scenario, 1000)
	for i := range in {
		in[i] = ev.Scenario{RunID: runs[0].ID}
	}
	scen, err := svc.CreateScenarios(ctx, sc, in)
	pgtest.Must(b, err)
	return svc, sc, runs[0], scen
}

// BenchmarkResultWrite is one worker writing one finished cell.
func BenchmarkResultWrite(b *testing.B) {
	svc, sc, run, scen := benchWorld(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := scen[i%len(scen)]
		if _, err := svc.UpsertResults(ctx, sc, []ev.Result{{RunID: run.ID, ScenarioID: s.ID, StepKey: "evaluator-a", Status: ev.Success}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResultWriteBatch is one worker writing n finished cells in one
// call, as a pass's result buffer does (services/runtime/internal/evalrun,
// resultBuffer), with a worker's meta and a trace id: the cost per result
// tells what a larger write saves.
func BenchmarkResultWriteBatch(b *testing.B) {
	svc, sc, run, scen := benchWorld(b)
	meta := json.RawMessage(`{"worker":"runtime-1","cache":"cell","reused":{"run_id":"` + run.ID + `","scenario_id":"` + scen[0].ID + `","step_key":"evaluator-a","repeat_idx":0}}`)
	trace := "0123456789abcdef0123456789abcdef"
	for _, n := range []int{50, 300} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rs := make([]ev.Result, n)
			for i := 0; b.Loop(); i++ {
				for j := range rs {
					s := scen[(i*n+j)%len(scen)]
					rs[j] = ev.Result{RunID: run.ID, ScenarioID: s.ID, StepKey: []string{"evaluator-a", "evaluator-b", "evaluator-c"}[j%3], Status: ev.Success, TraceID: &trace, Meta: meta}
				}
				if _, err := svc.UpsertResults(ctx, sc, rs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/result")
		})
	}
}

// BenchmarkClaim10 is one claim of 10 scenarios' application cells.
func BenchmarkClaim10(b *testing.B) {
	svc, sc, run, scen := benchWorld(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := ev.ClaimRequest{RunID: run.ID, Worker: "w", LeaseSeconds: 60, Overwrite: true}
		for j := 0; j < 10; j++ {
			req.Cells = append(req.Cells, ev.ClaimCellIn{ScenarioID: scen[(i*10+j)%len(scen)].ID, StepKey: "application-a"})
		}
		if _, err := svc.Claim(ctx, sc, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSettle is a settle of the 1000-scenario run.
func BenchmarkSettle(b *testing.B) {
	svc, sc, run, _ := benchWorld(b)
	rid := uuid.MustParse(run.ID)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := svc.Settle(ctx, sc, rid); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunRead is one read by id: the round-trip floor of the others.
func BenchmarkRunRead(b *testing.B) {
	svc, sc, run, _ := benchWorld(b)
	rid := uuid.MustParse(run.ID)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Run(ctx, sc, rid); err != nil {
			b.Fatal(err)
		}
	}
}
