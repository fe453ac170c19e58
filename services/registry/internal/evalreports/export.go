package evalreports

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Export of a run's scenarios × steps (ours, as the comparison), streamed:
// one row per scenario in scenario id order, read page by page (scenarios,
// then their cells and metrics) and written as read, so a run of any size
// is exported in bounded memory.
//
// Columns: scenario_id, status, testcase_id; then, for every expected
// cell (every step at every repeat, the invocation at repeat 0 unless
// split: Expected), <step_key>/<repeat>/status, /trace_id and /error;
// then one column per metric of the scenarios' variational metrics that
// has a per-scenario value (<step_key>/<path>: a numeric metric's mean, a
// binary one's rate of true; as the comparison reads them). The metric
// columns are found by a first pass over the run's metrics (their keys
// only), so the header is complete before the first row.

// Export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// Bounds of an export's shape: cells per scenario (three columns each)
// and metric columns. Past them the export is refused (cells) or the
// further metric columns are left out (the first ones by step and path
// are kept).
const (
	MaxExportCells         = 1000
	MaxExportMetricColumns = 1000
	// exportPage is the scenarios of one page; fewer when a scenario has
	// many cells, so a page's results stay under exportResults.
	exportPage    = 200
	exportResults = 10000
)

// RowWriter receives an export: the header once, then the rows (values
// aligned with the columns: string, float64, json.RawMessage or nil),
// with a Flush after each page, and Close at the end.
type RowWriter interface {
	Header(columns []string) error
	Row(values []any) error
	Flush() error
	Close() error
}

// Export is a prepared export: the run is known to exist and its columns
// are set; Write streams it.
type Export struct {
	s        *Reports
	project  uuid.UUID
	Run      *evaluations.Run
	Columns  []string
	cells    []evaluations.Cell
	cellAt   map[evaluations.Cell]int // the cell's first column
	metricAt map[[2]string]int
	inputs   []string
}

// PrepareExport checks the run and the format and finds the columns; a
// missing run is ErrNotFound (404), a bad format a 422 naming it.
func (s *Reports) PrepareExport(ctx context.Context, sc scope.Scope, id uuid.UUID, format string) (*Export, error) {
	if format != FormatCSV && format != FormatJSON {
		return nil, errs.Field("Input should be 'csv' or 'json'", format, "query", "format")
	}
	runs, err := s.store.Runs(ctx, sc.ProjectID, evaluations.Filter{IDs: []uuid.UUID{id}, Windowing: evaluations.UpTo(1)})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, evaluations.ErrNotFound
	}
	r := &runs[0]
	x := &Export{s: s, project: sc.ProjectID, Run: r, cells: evaluations.Expected(r, false), cellAt: map[evaluations.Cell]int{}, metricAt: map[[2]string]int{}}
	if len(x.cells) > MaxExportCells {
		return nil, errs.Message(errs.Unprocessable, "evaluations.export_too_wide",
			fmt.Sprintf("The run has %d cells per scenario; an export takes at most %d.", len(x.cells), MaxExportCells),
			map[string]any{"run_id": r.ID})
	}
	// Cells under keys the run does not declare (annotations the
	// compatible clients link under "<invocation>.<evaluator>") follow the
	// declared ones.
	more, err := s.svc.UndeclaredCells(ctx, sc.ProjectID, r, MaxExportCells+1-len(x.cells))
	if err != nil {
		return nil, err
	}
	x.cells = append(x.cells, more...)
	if len(x.cells) > MaxExportCells {
		return nil, errs.Message(errs.Unprocessable, "evaluations.export_too_wide",
			fmt.Sprintf("The run has more than %d cells per scenario; an export takes at most %d.", MaxExportCells, MaxExportCells),
			map[string]any{"run_id": r.ID})
	}
	x.Columns = []string{"scenario_id", "status", "testcase_id"}
	for _, c := range x.cells {
		x.cellAt[c] = len(x.Columns)
		p := c.StepKey + "/" + strconv.Itoa(c.RepeatIdx) + "/"
		x.Columns = append(x.Columns, p+"status", p+"trace_id", p+"error")
	}
	for _, st := range r.Data.Steps {
		if st.Type == evaluations.TypeInput {
			x.inputs = append(x.inputs, st.Key)
		}
	}
	keys, err := x.metricKeys(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		x.metricAt[k] = len(x.Columns)
		x.Columns = append(x.Columns, k[0]+"/"+k[1])
	}
	return x, nil
}

// metricKeys is the (step, path) of every per-scenario value of the run's
// variational metrics, sorted, at most MaxExportMetricColumns: found by
// the store (Store.MetricKeys), not by reading every metric here, so the
// header and the first page follow at once.
func (x *Export) metricKeys(ctx context.Context) ([][2]string, error) {
	return x.s.store.MetricKeys(ctx, x.project, uuid.MustParse(x.Run.ID), MaxExportMetricColumns)
}

// metricValues are a metric's per-scenario values by (step, path). A part
// of another shape (a step or stats that is not an object) is skipped, not
// the whole record: what Store.MetricKeys finds columns for.
func metricValues(data json.RawMessage) map[[2]string]float64 {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	out := map[[2]string]float64{}
	for step, raw := range d {
		var paths map[string]json.RawMessage
		if json.Unmarshal(raw, &paths) != nil {
			continue
		}
		for path, rawStats := range paths {
			var stats map[string]any
			if json.Unmarshal(rawStats, &stats) != nil {
				continue
			}
			if _, v, ok := scenarioValue(stats); ok {
				out[[2]string{step, path}] = v
			}
		}
	}
	return out
}

// Write streams the rows through w, a page of scenarios at a time.
func (x *Export) Write(ctx context.Context, w RowWriter) error {
	if err := w.Header(x.Columns); err != nil {
		return err
	}
	rid := uuid.MustParse(x.Run.ID)
	size := max(1, min(exportPage, exportResults/max(1, len(x.cells))))
	asc := "ascending"
	win := &versioned.Windowing{Order: &asc, Limit: &size}
	for {
		ss, err := x.s.store.Scenarios(ctx, x.project, evaluations.Filter{RunIDs: []uuid.UUID{rid}, Windowing: win})
		if err != nil {
			return err
		}
		if err := x.writePage(ctx, w, rid, ss); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if len(ss) < size {
			return w.Close()
		}
		next := *win
		last := uuid.MustParse(ss[len(ss)-1].ID)
		next.Next = &last
		win = &next
	}
}

// writePage writes one page of scenarios with their cells and metrics.
func (x *Export) writePage(ctx context.Context, w RowWriter, rid uuid.UUID, ss []evaluations.Scenario) error {
	if len(ss) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(ss))
	rows := make(map[string][]any, len(ss))
	for i, sc := range ss {
		ids[i] = uuid.MustParse(sc.ID)
		row := make([]any, len(x.Columns))
		row[0], row[1] = sc.ID, string(sc.Status)
		rows[sc.ID] = row
	}
	err := eachPage(func(win *versioned.Windowing) (int, *uuid.UUID, error) {
		rs, err := x.s.store.Results(ctx, x.project, evaluations.Filter{RunIDs: []uuid.UUID{rid}, ScenarioIDs: ids, Windowing: win})
		if err != nil || len(rs) == 0 {
			return 0, nil, err
		}
		for _, res := range rs {
			row := rows[res.ScenarioID]
			if row == nil {
				continue
			}
			if res.TestcaseID != nil && row[2] == nil && res.RepeatIdx == 0 && x.isInput(res.StepKey) {
				row[2] = *res.TestcaseID
			}
			at, ok := x.cellAt[evaluations.Cell{StepKey: res.StepKey, RepeatIdx: res.RepeatIdx}]
			if !ok {
				continue // a cell of a step the run no longer has
			}
			row[at] = string(res.Status)
			if res.TraceID != nil {
				row[at+1] = *res.TraceID
			}
			if len(res.Error) > 0 && string(res.Error) != "null" {
				row[at+2] = res.Error
			}
		}
		last := uuid.MustParse(rs[len(rs)-1].ID)
		return len(rs), &last, nil
	})
	if err != nil {
		return err
	}
	if len(x.metricAt) > 0 {
		err = eachPage(func(win *versioned.Windowing) (int, *uuid.UUID, error) {
			ms, err := x.s.store.Metrics(ctx, x.project, evaluations.Filter{RunIDs: []uuid.UUID{rid}, ScenarioIDs: ids, Windowing: win})
			if err != nil || len(ms) == 0 {
				return 0, nil, err
			}
			for _, m := range ms {
				if m.ScenarioID == nil || rows[*m.ScenarioID] == nil {
					continue
				}
				for k, v := range metricValues(m.Data) {
					if at, ok := x.metricAt[k]; ok {
						rows[*m.ScenarioID][at] = v
					}
				}
			}
			last := uuid.MustParse(ms[len(ms)-1].ID)
			return len(ms), &last, nil
		})
		if err != nil {
			return err
		}
	}
	for _, sc := range ss {
		if err := w.Row(rows[sc.ID]); err != nil {
			return err
		}
	}
	return nil
}

func (x *Export) isInput(step string) bool {
	for _, k := range x.inputs {
		if k == step {
			return true
		}
	}
	return false
}

// CSVWriter writes an export as CSV (RFC 4180): the header row, then a
// row per scenario; an error cell holds the error's message (or its JSON
// when it has none), a missing value is empty.
type CSVWriter struct {
	w   *csv.Writer
	out io.Writer
}

// NewCSVWriter writes CSV to w; a w with a Flush() method (an HTTP
// response) is flushed after each page.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w), out: w} }

// Header writes the header row.
func (c *CSVWriter) Header(columns []string) error { return c.w.Write(columns) }

// Row writes one row.
func (c *CSVWriter) Row(values []any) error {
	rec := make([]string, len(values))
	for i, v := range values {
		switch t := v.(type) {
		case nil:
		case string:
			rec[i] = t
		case float64:
			rec[i] = strconv.FormatFloat(t, 'g', -1, 64)
		case json.RawMessage:
			rec[i] = errorText(t)
		default:
			rec[i] = fmt.Sprint(t)
		}
	}
	return c.w.Write(rec)
}

// Flush sends the buffered rows on.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	flush(c.out)
	return nil
}

// flush sends on what an HTTP response buffered.
func flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
}

// Close flushes.
func (c *CSVWriter) Close() error { return c.Flush() }

// errorText is an error's message, or its JSON.
func errorText(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return strings.TrimSpace(string(raw))
}

// JSONWriter writes an export as one JSON document
// {"run_id", "columns": [...], "rows": [{column: value, ...}, ...]}, each
// row's keys in column order and null values left out; an error is the
// cell's error object.
type JSONWriter struct {
	w       io.Writer
	runID   string
	columns []string
	rows    int
}

// NewJSONWriter writes the export of run runID as JSON to w.
func NewJSONWriter(w io.Writer, runID string) *JSONWriter { return &JSONWriter{w: w, runID: runID} }

// Header opens the document.
func (j *JSONWriter) Header(columns []string) error {
	j.columns = columns
	id, _ := json.Marshal(j.runID)
	cols, _ := json.Marshal(columns)
	_, err := fmt.Fprintf(j.w, `{"run_id":%s,"columns":%s,"rows":[`, id, cols)
	return err
}

// Row writes one row object.
func (j *JSONWriter) Row(values []any) error {
	var b strings.Builder
	if j.rows > 0 {
		b.WriteString(",")
	}
	b.WriteString("\n{")
	first := true
	for i, v := range values {
		if v == nil {
			continue
		}
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		key, _ := json.Marshal(j.columns[i])
		if !first {
			b.WriteString(",")
		}
		first = false
		b.Write(key)
		b.WriteString(":")
		b.Write(val)
	}
	b.WriteString("}")
	j.rows++
	_, err := io.WriteString(j.w, b.String())
	return err
}

// Flush sends the page on, when w is an HTTP response.
func (j *JSONWriter) Flush() error { flush(j.w); return nil }

// Close ends the document with the row count.
func (j *JSONWriter) Close() error {
	_, err := fmt.Fprintf(j.w, "\n],\"count\":%d}\n", j.rows)
	return err
}
