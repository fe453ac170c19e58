package query

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Windowing bounds and pages a query.
type Windowing struct {
	Newest   *time.Time
	Oldest   *time.Time
	Next     string
	Limit    int
	Order    string // descending (default) or ascending
	Rate     *float64
	Interval int
}

// RawWindowing is the JSON form of Windowing.
type RawWindowing struct {
	Newest   any      `json:"newest,omitempty"`
	Oldest   any      `json:"oldest,omitempty"`
	Next     string   `json:"next,omitempty"`
	Limit    *int     `json:"limit,omitempty"`
	Order    string   `json:"order,omitempty"`
	Rate     *float64 `json:"rate,omitempty"`
	Interval *int     `json:"interval,omitempty"`
}

// Parse validates w; errors name the field under path.
func (w *RawWindowing) Parse(path string) (*Windowing, error) {
	if w == nil {
		return nil, nil
	}
	out := &Windowing{Next: w.Next, Order: w.Order, Rate: w.Rate}
	for _, f := range []struct {
		name string
		v    any
		dst  **time.Time
	}{{"newest", w.Newest, &out.Newest}, {"oldest", w.Oldest, &out.Oldest}} {
		if f.v == nil {
			continue
		}
		v := f.v
		if n, ok := v.(float64); ok {
			v = fmt.Sprintf("%.0f", n)
		}
		t, err := spanmodel.Time(v)
		if err != nil {
			return nil, invalid(path+"."+f.name, "%v", err)
		}
		*f.dst = &t
	}
	switch out.Order {
	case "", "descending", "ascending":
	default:
		return nil, invalid(path+".order", "order %q is not ascending or descending", out.Order)
	}
	if out.Oldest != nil && out.Newest != nil && out.Oldest.After(*out.Newest) {
		return nil, invalid(path+".oldest", "oldest (%s) is after newest (%s)", out.Oldest.Format(time.RFC3339Nano), out.Newest.Format(time.RFC3339Nano))
	}
	if w.Limit != nil {
		// The compatible platform clamps 0 or less to 1: a page of one span for a
		// typo. A limit is a positive count.
		if *w.Limit < 1 {
			return nil, invalid(path+".limit", "limit must be a positive number of items, got %d", *w.Limit)
		}
		out.Limit = *w.Limit
	}
	if w.Rate != nil && !(*w.Rate >= 0 && *w.Rate <= 1) { // NaN too
		return nil, invalid(path+".rate", "rate must be between 0 and 1")
	}
	if w.Interval != nil {
		if *w.Interval < 0 {
			return nil, invalid(path+".interval", "interval is in minutes and must not be negative, got %d", *w.Interval)
		}
		out.Interval = *w.Interval
	}
	return out, nil
}

// check validates w for a query of focus (span, trace, or "" for the
// session and user lists, which page by time alone): the limit within the
// service's maximum, and the cursor, which names the last item of the
// previous page (a span id, or a trace id) and needs that page's edge
// (newest when descending, oldest when ascending). It normalises Next.
func (w *Windowing) check(focus string, maxItems int) error {
	if w == nil {
		return nil
	}
	if w.Limit > maxItems {
		msg := fmt.Sprintf("windowing.limit: %d is over the limit of %d (TRACING_QUERY_MAX_SPANS)", w.Limit, maxItems)
		return errs.WithDetail(errs.Invalid, "tracing.invalid_windowing", msg, msg)
	}
	if w.Next == "" {
		return nil
	}
	switch focus {
	case "span":
		id, err := spanmodel.SpanID(w.Next)
		if err != nil {
			return invalid("windowing.next", "the cursor is not a span id: %v", err)
		}
		w.Next = id
		if edgeOf(w, w.Order != "ascending") == nil {
			edge := "newest"
			if w.Order == "ascending" {
				edge = "oldest"
			}
			return invalid("windowing.next", "a cursor needs windowing.%s, the edge of the page it continues (as returned with it)", edge)
		}
	case "trace":
		id, err := spanmodel.TraceID(w.Next)
		if err != nil {
			return invalid("windowing.next", "the cursor is not a trace id: %v", err)
		}
		w.Next = id
	default:
		return invalid("windowing.next", "this query pages by windowing.newest and windowing.oldest; it takes no cursor")
	}
	return nil
}

// Request is a span or trace query.
type Request struct {
	Focus     string // span or trace
	Filter    json.RawMessage
	Windowing *Windowing
}

// Service answers queries.
type Service struct {
	store    *Store
	maxSpans int
}

// NewService returns a query service; maxSpans caps a query without a limit.
func NewService(store *Store, maxSpans int) *Service {
	return &Service{store: store, maxSpans: maxSpans}
}

// Reads is the memory budget of the service's span reads (nil without a
// store).
func (s *Service) Reads() *Budget {
	if s == nil || s.store == nil {
		return nil
	}
	return s.store.reads
}

// Result holds the spans found, in order, and the next page's windowing
// when the page was full.
type Result struct {
	Spans []Parsed
	Next  *RawWindowing
}

// Query runs req for the project. With focus trace, all spans of the
// selected traces are returned, each trace's spans by start time.
func (s *Service) Query(ctx context.Context, project string, req Request) (Result, error) {
	f, err := Compile(req.Filter, "filtering", s.store.limits.Filter)
	if err != nil {
		return Result{}, err
	}
	if err := req.Windowing.check(req.Focus, s.maxSpans); err != nil {
		return Result{}, err
	}
	if ids, ok := traceIDFastPath(req.Filter); ok {
		rows, err := s.store.spansByKey(ctx, project, inList("trace_id", ids), anys(ids), "trace_id, start_us", s.maxSpans)
		if err != nil {
			return Result{}, err
		}
		return s.result(rows, req.Focus == "trace"), nil
	}
	where, args := f.SQL, f.Args
	w := req.Windowing
	j := s.rollupFor(f, w)
	desc := w == nil || w.Order != "ascending"
	cmp, eqOrder := "<", "<"
	if !desc {
		cmp, eqOrder = ">", ">"
	}
	if w != nil && w.Rate != nil {
		where += " AND reinterpretAsUInt32(reverse(unhex(substring(trace_id, 1, 8)))) % 100 < ?"
		args = append(args, uint32(*w.Rate*100))
	}
	if req.Focus == "trace" {
		var having []string
		var hargs []any
		if w != nil && w.Oldest != nil {
			// t (a trace's latest matching start) >= oldest exactly when a
			// matching span starts at or after oldest: said in WHERE too, it
			// prunes the partitions before the window.
			where += " AND start_us >= ?"
			args = append(args, w.Oldest.UnixMicro())
		}
		if w != nil {
			if w.Oldest != nil && desc || w.Newest != nil && !desc {
				bound, op := w.Oldest, ">="
				if !desc {
					bound, op = w.Newest, "<="
				}
				having = append(having, "group_us "+op+" ?")
				hargs = append(hargs, bound.UnixMicro())
			}
			if edge := edgeOf(w, desc); edge != nil {
				if w.Next != "" {
					having = append(having, "(group_us "+cmp+" ? OR (group_us = ? AND trace_id "+eqOrder+" ?))")
					hargs = append(hargs, edge.UnixMicro(), edge.UnixMicro(), w.Next)
				} else {
					having = append(having, "group_us "+cmp+" ?")
					hargs = append(hargs, edge.UnixMicro())
				}
			} else if w.Next != "" {
				having = append(having, "trace_id "+eqOrder+" ?")
				hargs = append(hargs, w.Next)
			}
		}
		limit := s.maxSpans
		order := "descending"
		if w != nil {
			if w.Limit > 0 {
				limit = w.Limit
			}
			order = w.Order
		}
		ids, times, err := s.store.traceIDs(ctx, project, j, where, args, strings.Join(having, " AND "), hargs, order, limit)
		if err != nil {
			return Result{}, err
		}
		if len(ids) == 0 {
			return Result{}, nil
		}
		rows, err := s.store.spansByKey(ctx, project, inList("trace_id", ids), anys(ids), "start_us, span_id", 0)
		if err != nil {
			return Result{}, err
		}
		// Keep the traces in their selected order.
		rank := map[string]int{}
		for i, id := range ids {
			rank[id] = i
		}
		sort.SliceStable(rows, func(i, j int) bool { return rank[rows[i].TraceID] < rank[rows[j].TraceID] })
		res := s.result(rows, true)
		if w != nil && w.Limit > 0 && len(ids) == w.Limit {
			res.Next = nextWindow(w, times[len(times)-1], ids[len(ids)-1])
		}
		return res, nil
	}

	order, limit := "", s.maxSpans
	if w != nil {
		if w.Oldest != nil && desc || w.Newest != nil && !desc {
			bound, op := w.Oldest, ">="
			if !desc {
				bound, op = w.Newest, "<="
			}
			where += " AND start_us " + op + " ?"
			args = append(args, bound.UnixMicro())
		}
		if edge := edgeOf(w, desc); edge != nil {
			if w.Next != "" {
				where += " AND (start_us " + cmp + " ? OR (start_us = ? AND span_id " + eqOrder + " ?))"
				args = append(args, edge.UnixMicro(), edge.UnixMicro(), w.Next)
			} else {
				where += " AND start_us " + cmp + " ?"
				args = append(args, edge.UnixMicro())
			}
		}
		dir := "DESC"
		if !desc {
			dir = "ASC"
		}
		if w.Limit > 0 {
			limit = w.Limit
		}
		order = fmt.Sprintf("ORDER BY start_us %s, span_id %s", dir, dir)
		limit = min(limit, s.maxSpans)
	}
	// Two phases: the keys of the page over the filter's columns only, then
	// the page's full rows by key (rowsOf keeps a key only when its latest
	// version is the one that matched). Without a roll-up join the first
	// phase reads unmerged rows, a little more than the page: stale
	// versions and duplicates take room; if too few keys survive while more
	// were there, it is redone with FINAL.
	var rows []Row
	done := false
	if j.sql == "" {
		over := limit + limit/4 + 8
		keys, n, err := s.store.keysUnmerged(ctx, project, where, args, fmt.Sprintf("%s LIMIT %d", order, over))
		if err != nil {
			return Result{}, err
		}
		// Only the page's keys are read in full: the surplus is there to
		// make up for stale versions, and reading it would hold rows (up
		// to 8 more spans of any size, see query.Budget) the answer drops.
		// When stale keys leave the page short, FINAL below reads it.
		page := keys[:min(len(keys), limit)]
		if rows, err = s.store.rowsOf(ctx, project, page); err != nil {
			return Result{}, err
		}
		if len(rows) >= limit || n < over && len(page) == len(keys) {
			rows, done = rows[:min(len(rows), limit)], true
		}
	}
	if !done {
		keys, err := s.store.keys(ctx, project, j, where, args, fmt.Sprintf("%s LIMIT %d", order, limit))
		if err != nil {
			return Result{}, err
		}
		if rows, err = s.store.rowsOf(ctx, project, keys); err != nil {
			return Result{}, err
		}
	}
	res, err := s.rolledSpans(ctx, project, rows)
	if err == nil && w != nil && w.Limit > 0 && len(rows) == w.Limit {
		last := rows[len(rows)-1]
		res.Next = nextWindow(w, last.StartUS, last.SpanID)
	}
	return res, err
}

// edgeOf is the exclusive end the window starts from: newest when paging
// backwards in time, oldest when paging forwards.
func edgeOf(w *Windowing, desc bool) *time.Time {
	if desc {
		return w.Newest
	}
	return w.Oldest
}

func nextWindow(w *Windowing, lastUS int64, lastID string) *RawWindowing {
	limit := w.Limit
	next := &RawWindowing{Next: lastID, Limit: &limit, Order: w.Order}
	if next.Order == "" {
		next.Order = "descending"
	}
	edge := chspans.FormatTime(lastUS)
	if next.Order == "descending" {
		next.Newest = edge
		if w.Oldest != nil {
			next.Oldest = w.Oldest.Format(time.RFC3339Nano)
		}
	} else {
		next.Oldest = edge
		if w.Newest != nil {
			next.Newest = w.Newest.Format(time.RFC3339Nano)
		}
	}
	return next
}

func (s *Service) result(rows []Row, rollUp bool) Result {
	parsed := parseRows(rows)
	if rollUp {
		// Spans of one trace may have arrived in several requests: roll the
		// metrics up again over the whole stored trace.
		spans := make([]*spanmodel.Span, len(parsed))
		for i := range parsed {
			spans[i] = &spanmodel.Span{TraceID: parsed[i].TraceID, SpanID: parsed[i].SpanID, ParentID: parsed[i].ParentID, Attributes: parsed[i].Attrs}
		}
		spanmodel.RollUp(spans)
	}
	return Result{Spans: parsed}
}

// traceIDFastPath recognises a filter that is exactly one trace_id is/in.
func traceIDFastPath(raw json.RawMessage) ([]string, bool) {
	var f struct {
		Operator   string      `json:"operator"`
		Conditions []Condition `json:"conditions"`
	}
	if json.Unmarshal(raw, &f) != nil || len(f.Conditions) != 1 || (f.Operator != "" && f.Operator != "and") {
		return nil, false
	}
	c := f.Conditions[0]
	if c.Field != "trace_id" || (c.Operator != "" && c.Operator != "is" && c.Operator != "in") {
		return nil, false
	}
	var vals []any
	if l, ok := c.Value.([]any); ok {
		vals = l
	} else {
		vals = []any{c.Value}
	}
	var ids []string
	for _, v := range vals {
		id, err := spanmodel.TraceID(fmt.Sprint(v))
		if err != nil {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, len(ids) > 0
}

// Traces returns the spans of the given traces.
func (s *Service) Traces(ctx context.Context, project string, ids []string) ([]Parsed, error) {
	rows, err := s.store.spansByKey(ctx, project, inList("trace_id", ids), anys(ids), "trace_id, start_us, span_id", 0)
	if err != nil {
		return nil, err
	}
	return s.result(rows, true).Spans, nil
}

// Spans returns the given spans; spanIDs may be empty to take whole traces.
func (s *Service) Spans(ctx context.Context, project string, traceIDs, spanIDs []string) ([]Parsed, error) {
	where, args := "1", []any{}
	if len(traceIDs) > 0 {
		where += " AND " + inList("trace_id", traceIDs)
		args = append(args, anys(traceIDs)...)
	}
	if len(spanIDs) > 0 {
		where += " AND " + inList("span_id", spanIDs)
		args = append(args, anys(spanIDs)...)
	}
	rows, err := s.store.spansByKey(ctx, project, where, args, "start_us, span_id", s.maxSpans)
	if err != nil {
		return nil, err
	}
	res, err := s.rolledSpans(ctx, project, rows)
	return res.Spans, err
}

// rollupFor is the roll-up join a compiled filter needs (none when it reads
// no cumulative metric), limited to the traces with a span in the window.
func (s *Service) rollupFor(f Compiled, w *Windowing) joinClause {
	if !f.Rollup {
		return joinClause{}
	}
	scope, args := "", []any(nil)
	if w != nil && (w.Oldest != nil || w.Newest != nil) {
		scope = "trace_id IN (SELECT trace_id FROM spans WHERE project_id = ?"
		args = append(args, nil)
		if w.Oldest != nil {
			scope += " AND start_us >= ?"
			args = append(args, w.Oldest.UnixMicro())
		}
		if w.Newest != nil {
			scope += " AND start_us <= ?"
			args = append(args, w.Newest.UnixMicro())
		}
		scope += ")"
	}
	sql, jargs := rollupJoin(scope, args)
	return joinClause{sql: sql, args: jargs}
}

// rolledSpans parses spans that are not whole traces and sets their
// cumulative metrics from their whole stored traces, as trace reads do:
// the stored values cover only the spans of one ingest request.
func (s *Service) rolledSpans(ctx context.Context, project string, rows []Row) (Result, error) {
	res := s.result(rows, false)
	if len(rows) == 0 {
		return res, nil
	}
	ids := []string{}
	seen := map[string]bool{}
	page := map[string]bool{}
	for _, r := range rows {
		page[r.TraceID+r.SpanID] = true
		if !seen[r.TraceID] {
			seen[r.TraceID] = true
			ids = append(ids, r.TraceID)
		}
	}
	all, err := s.store.spansByKey(ctx, project, inList("trace_id", ids), anys(ids), "trace_id", 0)
	if err != nil {
		return Result{}, err
	}
	others := parseRows(all)
	spans := make([]*spanmodel.Span, 0, len(others))
	for i := range res.Spans {
		p := &res.Spans[i]
		spans = append(spans, &spanmodel.Span{TraceID: p.TraceID, SpanID: p.SpanID, ParentID: p.ParentID, Attributes: p.Attrs})
	}
	for i := range others {
		if p := &others[i]; !page[p.TraceID+p.SpanID] {
			spans = append(spans, &spanmodel.Span{TraceID: p.TraceID, SpanID: p.SpanID, ParentID: p.ParentID, Attributes: p.Attrs})
		}
	}
	spanmodel.RollUp(spans)
	return res, nil
}

// Distinct lists session or user ids.
func (s *Service) Distinct(ctx context.Context, project, column string, realtime bool, w *Windowing) ([]string, *RawWindowing, error) {
	return s.DistinctFiltered(ctx, project, column, realtime, nil, w)
}

// DistinctFiltered is Distinct over the spans that match filter (the
// filtering tree of a span query, compiled at path "filtering"): the
// sessions of production calls only, say. A filter on cumulative metrics
// is refused, a 400: they are rolled up per trace, which a distinct
// query does not join.
func (s *Service) DistinctFiltered(ctx context.Context, project, column string, realtime bool, filter json.RawMessage, w *Windowing) ([]string, *RawWindowing, error) {
	f, err := Compile(filter, "filtering", s.store.limits.Filter)
	if err != nil {
		return nil, nil, err
	}
	if f.Rollup {
		return nil, nil, invalid("filtering", "cumulative metrics cannot filter %ss", strings.TrimSuffix(column, "_id"))
	}
	if err := w.check("", s.maxSpans); err != nil {
		return nil, nil, err
	}
	desc := w == nil || w.Order != "ascending"
	order, limit := "descending", 0
	var having []string
	var hargs []any
	if w != nil {
		order, limit = w.Order, w.Limit
		if w.Newest != nil {
			op := "<"
			if !desc {
				op = "<="
			}
			having = append(having, "group_us "+op+" ?")
			hargs = append(hargs, w.Newest.UnixMicro())
		}
		if w.Oldest != nil {
			op := ">="
			if !desc {
				op = ">"
			}
			having = append(having, "group_us "+op+" ?")
			hargs = append(hargs, w.Oldest.UnixMicro())
		}
	}
	if limit == 0 {
		limit = s.maxSpans
	}
	ids, times, err := s.store.distinct(ctx, project, column, realtime, f.SQL, f.Args, strings.Join(having, " AND "), hargs, order, limit)
	if err != nil {
		return nil, nil, err
	}
	var next *RawWindowing
	if w != nil && w.Limit > 0 && len(ids) == w.Limit {
		next = nextWindow(w, times[len(times)-1], "")
		next.Next = ""
	}
	return ids, next, nil
}
