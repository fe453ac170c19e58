package evalreports_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/evalreports"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
)

// pages records how many rows each flushed page held, around a real writer.
type pages struct {
	evalreports.RowWriter
	rows, sizes []int
}

func (p *pages) Row(v []any) error {
	p.rows = append(p.rows, 1)
	return p.RowWriter.Row(v)
}

func (p *pages) Flush() error {
	p.sizes = append(p.sizes, len(p.rows))
	p.rows = nil
	return p.RowWriter.Flush()
}

func TestExport(t *testing.T) {
	w := newCompareWorld(t, ev.Config{})
	const n = 205 // two pages of scenarios
	outcomes := make([]outcome, n)
	tcs := make([]string, n)
	for i := range outcomes {
		tcs[i] = uuid.NewString()
		outcomes[i] = outcome{testcase: tcs[i], score: float64(i%4) / 4, success: i%2 == 0}
	}
	outcomes[3] = outcome{testcase: tcs[3], score: 0, status: ev.Failure, err: "webhook answered 500"}
	outcomes[4].score = -1 // no metrics for this scenario
	r := w.makeRun(t, uuid.NewString(), "a", outcomes)

	wantColumns := []string{"scenario_id", "status", "testcase_id",
		"testset-x/0/status", "testset-x/0/trace_id", "testset-x/0/error",
		"application-a/0/status", "application-a/0/trace_id", "application-a/0/error",
		"evaluator-exact/0/status", "evaluator-exact/0/trace_id", "evaluator-exact/0/error",
		"application-a/attributes.ag.metrics.duration.cumulative",
		"evaluator-exact/" + scorePath, "evaluator-exact/" + successPath}

	t.Run("csv, streamed a page at a time", func(t *testing.T) {
		x, err := w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(r.ID), evalreports.FormatCSV)
		require.NoError(t, err)
		assert.Equal(t, wantColumns, x.Columns, "categorical metrics have no per-scenario value: no column")
		var buf bytes.Buffer
		rec := &pages{RowWriter: evalreports.NewCSVWriter(&buf)}
		require.NoError(t, x.Write(ctx, rec))
		assert.Equal(t, []int{200, 5}, rec.sizes, "rows are written as each page of scenarios is read")

		rows, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, n+1)
		assert.Equal(t, wantColumns, rows[0])
		col := map[string]int{}
		for i, c := range rows[0] {
			col[c] = i
		}
		// Rows in scenario creation order, one per scenario.
		row := rows[1+2]
		assert.Equal(t, tcs[2], row[col["testcase_id"]])
		assert.Equal(t, "success", row[col["status"]])
		assert.Equal(t, "success", row[col["evaluator-exact/0/status"]])
		assert.Equal(t, "0000000000000000000000000000e002", row[col["evaluator-exact/0/trace_id"]])
		assert.Equal(t, "0.5", row[col["evaluator-exact/"+scorePath]], "scenario 2: 2/4")
		assert.Equal(t, "1", row[col["evaluator-exact/"+successPath]], "rate of true")
		assert.Equal(t, "300", row[col["application-a/attributes.ag.metrics.duration.cumulative"]])

		failed := rows[1+3]
		assert.Equal(t, "errors", failed[col["status"]])
		assert.Equal(t, "failure", failed[col["evaluator-exact/0/status"]])
		assert.Equal(t, "webhook answered 500", failed[col["evaluator-exact/0/error"]])
		assert.Equal(t, "0", failed[col["evaluator-exact/"+scorePath]], "the failure's score of 0")

		assert.Equal(t, "", rows[1+4][col["evaluator-exact/"+scorePath]], "no metrics: empty")
		assert.Equal(t, tcs[n-1], rows[n][col["testcase_id"]], "the second page follows the first")
	})

	t.Run("json", func(t *testing.T) {
		x, err := w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(r.ID), evalreports.FormatJSON)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, x.Write(ctx, evalreports.NewJSONWriter(&buf, r.ID)))
		var doc struct {
			RunID   string           `json:"run_id"`
			Columns []string         `json:"columns"`
			Rows    []map[string]any `json:"rows"`
			Count   int              `json:"count"`
		}
		require.NoError(t, json.Unmarshal(buf.Bytes(), &doc), buf.String()[:200])
		assert.Equal(t, r.ID, doc.RunID)
		assert.Equal(t, wantColumns, doc.Columns)
		assert.Equal(t, n, doc.Count)
		require.Len(t, doc.Rows, n)
		failed := doc.Rows[3]
		assert.Equal(t, map[string]any{"message": "webhook answered 500"}, failed["evaluator-exact/0/error"], "the error object as recorded")
		assert.Equal(t, 0.0, failed["evaluator-exact/"+scorePath])
		assert.NotContains(t, doc.Rows[4], "evaluator-exact/"+scorePath, "missing values are left out")
		assert.Equal(t, tcs[0], doc.Rows[0]["testcase_id"])
	})

	t.Run("repeats make a column group each", func(t *testing.T) {
		reps := 2
		runs, err := w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Repeats: &reps, Steps: []ev.Step{
			{Key: "testset-x", Type: ev.TypeInput, Origin: ev.OriginAuto},
			{Key: "application-a", Type: ev.TypeInvocation, Origin: ev.OriginAuto},
			{Key: "evaluator-exact", Type: ev.TypeAnnotation, Origin: ev.OriginAuto}}}}})
		require.NoError(t, err)
		x, err := w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(runs[0].ID), evalreports.FormatCSV)
		require.NoError(t, err)
		var groups []string
		for _, c := range x.Columns[3:] {
			if len(c) > 7 && c[len(c)-7:] == "/status" {
				groups = append(groups, c[:len(c)-7])
			}
		}
		assert.Equal(t, []string{"testset-x/0", "testset-x/1", "application-a/0", "evaluator-exact/0", "evaluator-exact/1"}, groups,
			"the application at repeat 0 only (not split)")
	})

	t.Run("metric columns: only values a scenario has, odd shapes skipped", func(t *testing.T) {
		runs, err := w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Steps: []ev.Step{
			{Key: "e", Type: ev.TypeAnnotation, Origin: ev.OriginAuto}}}}})
		require.NoError(t, err)
		rid := runs[0].ID
		ss, err := w.svc.CreateScenarios(ctx, w.sc, []ev.Scenario{{RunID: rid}, {RunID: rid}, {RunID: rid}})
		require.NoError(t, err)
		var ms []ev.Metric
		for i, d := range []string{
			`{"e": "text", "f": {"ok": {"type": "numeric/discrete", "mean": 2}}}`,
			`{"e": {"freq-text": {"type": "binary", "freq": "x"}, "odd-freq": {"type": "binary", "freq": [{"count": "1"}, 3, {"value": true, "count": 0}]},
			  "mean-text": {"type": "numeric/continuous", "mean": "1"}, "label": {"type": "categorical/single", "count": 1}, "stats-text": "x"}}`,
			`{"e": {"rate": {"type": "binary", "freq": [{"value": false, "count": 1}]}}}`,
		} {
			sid := ss[i].ID
			ms = append(ms, ev.Metric{RunID: rid, ScenarioID: &sid, Status: ev.Success, Data: json.RawMessage(d)})
		}
		ms = append(ms, ev.Metric{RunID: rid, Status: ev.Success, Data: json.RawMessage(`{"e": {"run-only": {"type": "numeric/continuous", "mean": 1}}}`)})
		_, err = w.svc.UpsertMetrics(ctx, w.sc, ms)
		require.NoError(t, err)
		x, err := w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(rid), evalreports.FormatCSV)
		require.NoError(t, err)
		assert.Equal(t, []string{"e/rate", "f/ok"}, x.Columns[len(x.Columns)-2:], "a binary rate, a numeric mean; sorted by step and path")
		assert.Len(t, x.Columns, 3+3+2, "nothing of the odd shapes, the categorical metric or the run-level metric")
		var buf bytes.Buffer
		require.NoError(t, x.Write(ctx, evalreports.NewCSVWriter(&buf)))
		rows, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 4)
		last := len(rows[0]) - 1
		assert.Equal(t, []string{"2", "", ""}, []string{rows[1][last], rows[2][last], rows[3][last]}, "f/ok of the record whose step e is text")
		assert.Equal(t, "0", rows[3][last-1], "e/rate")
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(r.ID), "xlsx")
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
		assert.Contains(t, err.Error(), "format")
		_, err = w.svc.PrepareExport(ctx, w.sc, uuid.New(), evalreports.FormatCSV)
		assert.Equal(t, http.StatusNotFound, status(t, err))
		reps := 400
		steps := []ev.Step{{Key: "e1", Type: ev.TypeAnnotation, Origin: ev.OriginAuto}, {Key: "e2", Type: ev.TypeAnnotation, Origin: ev.OriginAuto},
			{Key: "e3", Type: ev.TypeAnnotation, Origin: ev.OriginAuto}}
		wide, err := w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Repeats: &reps, Steps: steps}}})
		require.NoError(t, err)
		_, err = w.svc.PrepareExport(ctx, w.sc, uuid.MustParse(wide[0].ID), evalreports.FormatCSV)
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
		assert.Contains(t, err.Error(), strconv.Itoa(3*reps))
	})
}
