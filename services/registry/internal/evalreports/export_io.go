package evalreports

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// A CSV export is read without the console beside it, so besides the
// cells and scores it carries what each scenario was about: the
// testcase's columns (one per testset column, as the results page shows
// them), the application's output, and the expected answer beside it.
// They are read a page of rows at a time, once the page's cells have
// given its testcase ids and invocation traces.

// ExportLookups reads what the CSV export adds beside each scenario.
type ExportLookups interface {
	// TestcaseData is each testcase's data by id (missing ones absent).
	TestcaseData(ctx context.Context, sc scope.Scope, ids []uuid.UUID) (map[uuid.UUID]map[string]json.RawMessage, error)
	// TraceOutputs is the root span's outputs of each trace by trace id
	// (as the results record it); traces not found are absent.
	TraceOutputs(ctx context.Context, sc scope.Scope, traceIDs []string) (map[string]json.RawMessage, error)
}

// expectedColumns are the testset columns read as the expected answer,
// placed after the output (the console's results page reads the same
// names: services/console/web/src/pages/evaluations/results.ts).
var expectedColumns = []string{"correct_answer", "expected_answer", "expected_output", "expected", "reference", "ground_truth"}

// WithInputsOutputs wraps w (a CSV export's writer) so each row also
// carries its testcase's columns, the application's output and the
// expected answer, after testcase_id. Call it after NameColumns. The
// testset columns are the run's testset mappings (the simple evaluations
// map one per key of the first testcase).
func (x *Export) WithInputsOutputs(ctx context.Context, sc scope.Scope, lk ExportLookups, w RowWriter) RowWriter {
	io := &ioWriter{RowWriter: w, ctx: ctx, sc: sc, lk: lk, traceAt: -1}
	taken := map[string]bool{}
	for _, c := range x.Columns {
		taken[c] = true
	}
	name := func(col string) string {
		if taken[col] {
			return "testcase." + col
		}
		return col
	}
	seen := map[string]bool{}
	for _, m := range x.Run.Data.Mappings {
		if m.Column.Kind != "testset" || m.Column.Name == "" || seen[m.Column.Name] {
			continue
		}
		seen[m.Column.Name] = true
		if slices.Contains(expectedColumns, m.Column.Name) {
			io.expected = append(io.expected, m.Column.Name)
		} else {
			io.inputs = append(io.inputs, m.Column.Name)
		}
	}
	for _, c := range io.inputs {
		io.header = append(io.header, name(c))
	}
	names := stepNames(x.Run)
	for _, st := range x.Run.Data.Steps {
		if st.Type != evaluations.TypeInvocation {
			continue
		}
		if at, ok := x.cellAt[evaluations.Cell{StepKey: st.Key}]; ok {
			io.traceAt = at + 1
			io.header = append(io.header, name(names[st.Key]+".output"))
		}
		break
	}
	for _, c := range io.expected {
		io.header = append(io.header, name(c))
	}
	return io
}

// ioWriter holds a page of rows until its Flush, reads their testcases
// and outputs in two calls, and writes them on with the added columns.
type ioWriter struct {
	RowWriter
	ctx              context.Context
	sc               scope.Scope
	lk               ExportLookups
	inputs, expected []string
	header           []string // the added columns' headers
	traceAt          int      // the invocation cell's trace id column, -1 without one
	rows             [][]any
}

// Header inserts the added columns after scenario_id, status, testcase_id.
func (w *ioWriter) Header(columns []string) error {
	out := slices.Clone(columns[:3])
	out = append(out, w.header...)
	return w.RowWriter.Header(append(out, columns[3:]...))
}

// Row holds the row until the page is flushed.
func (w *ioWriter) Row(values []any) error {
	w.rows = append(w.rows, values)
	return nil
}

// Flush writes the held page with its added columns, then flushes.
func (w *ioWriter) Flush() error {
	if err := w.drain(); err != nil {
		return err
	}
	return w.RowWriter.Flush()
}

// Close writes what is held and closes.
func (w *ioWriter) Close() error {
	if err := w.drain(); err != nil {
		return err
	}
	return w.RowWriter.Close()
}

func (w *ioWriter) drain() error {
	if len(w.rows) == 0 {
		return nil
	}
	var ids []uuid.UUID
	var traces []string
	for _, r := range w.rows {
		if s, ok := r[2].(string); ok {
			if id, err := uuid.Parse(s); err == nil {
				ids = append(ids, id)
			}
		}
		if w.traceAt >= 0 {
			if s, ok := r[w.traceAt].(string); ok && s != "" {
				traces = append(traces, s)
			}
		}
	}
	data := map[uuid.UUID]map[string]json.RawMessage{}
	if len(ids) > 0 && (len(w.inputs) > 0 || len(w.expected) > 0) {
		var err error
		if data, err = w.lk.TestcaseData(w.ctx, w.sc, ids); err != nil {
			return err
		}
	}
	outs := map[string]json.RawMessage{}
	var unread any // what an output cell says when the traces could not be read
	if len(traces) > 0 {
		var err error
		if outs, err = w.lk.TraceOutputs(w.ctx, w.sc, traces); err != nil {
			// The rows are the registry's own and still worth having: the
			// file says where the outputs are missing and why, rather than
			// ending before its first row.
			unread = "(output not read: " + err.Error() + ")"
		}
	}
	for _, r := range w.rows {
		var tc map[string]json.RawMessage
		if s, ok := r[2].(string); ok {
			if id, err := uuid.Parse(s); err == nil {
				tc = data[id]
			}
		}
		out := slices.Clone(r[:3])
		for _, c := range w.inputs {
			out = append(out, cellText(tc[c]))
		}
		if w.traceAt >= 0 {
			var o json.RawMessage
			s, ok := r[w.traceAt].(string)
			if ok {
				o = outs[s]
			}
			if ok && s != "" && unread != nil {
				out = append(out, unread)
			} else {
				out = append(out, cellText(o))
			}
		}
		for _, c := range w.expected {
			out = append(out, cellText(tc[c]))
		}
		if err := w.RowWriter.Row(append(out, r[3:]...)); err != nil {
			return err
		}
	}
	w.rows = w.rows[:0]
	return nil
}

// cellText is a value as a spreadsheet cell: a string as itself, anything
// else as its JSON, nothing (or null) as an empty cell.
func cellText(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
