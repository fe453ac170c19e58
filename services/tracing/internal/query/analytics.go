package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/chspans"
)

// Analytics: root spans bucketed by ingest time
// (created_at), each bucket with statistics of the values at the specs'
// paths. Values are read by ClickHouse; the statistics are computed here,
// where exact percentiles and histograms are simple.

// MetricSpec names one statistic source.
type MetricSpec struct {
	Type string   `json:"type"`
	Path string   `json:"path"`
	Bins *int     `json:"bins,omitempty"`
	VMin *float64 `json:"vmin,omitempty"`
	VMax *float64 `json:"vmax,omitempty"`
	Edge *bool    `json:"edge,omitempty"`
	// OnError is the value a root span that recorded an exception (a
	// failed invocation) counts with when it holds no value at Path: a
	// number for the numeric types, a boolean for binary, a string for
	// categorical/single. The evaluation metrics count a failed
	// evaluator's score as 0 this way (services/runtime/internal/evalmetrics);
	// without it such a span is not counted, as the compatible platform does.
	OnError any `json:"on_error,omitempty"`
}

var specTypes = map[string]bool{"numeric/continuous": true, "numeric/discrete": true, "binary": true,
	"categorical/single": true, "categorical/multiple": true, "string": true, "json": true, "none": true, "*": true}

// DefaultSpecs are the compatible platform's defaults.
func DefaultSpecs() []MetricSpec {
	return []MetricSpec{
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.duration.cumulative"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.errors.cumulative"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.costs.cumulative.total"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.tokens.cumulative.total"},
		{Type: "categorical/single", Path: "attributes.ag.type.trace"},
		{Type: "categorical/single", Path: "attributes.ag.type.span"},
	}
}

// columnPaths are the span columns a spec path may name directly.
var columnPaths = map[string]string{"trace_type": "trace_type", "span_type": "span_type", "span_kind": "span_kind",
	"span_name": "span_name", "status_code": "status_code", "status_message": "status_message",
	"session_id": "session_id", "user_id": "user_id", "agent_id": "agent_id"}

// CheckSpecs validates specs; errors name specs[i].
func CheckSpecs(specs []MetricSpec, path string) error {
	for i, s := range specs {
		p := fmt.Sprintf("%s[%d]", path, i)
		if !specTypes[s.Type] {
			return invalid(p+".type", "%q is not a metric type (numeric/continuous, numeric/discrete, binary, categorical/single, categorical/multiple, string, json, none, *)", s.Type)
		}
		if _, ok := columnPaths[s.Path]; !ok && !strings.HasPrefix(s.Path, "attributes.") {
			return invalid(p+".path", "%q is neither attributes.<key> nor a span field", s.Path)
		}
		if s.Bins != nil && (*s.Bins < 1 || *s.Bins > 1000) {
			return invalid(p+".bins", "bins must be between 1 and 1000")
		}
		if s.OnError != nil {
			ok := false
			switch s.Type {
			case "numeric/continuous", "numeric/discrete":
				f, isNum := s.OnError.(float64)
				ok = isNum && !math.IsNaN(f) && !math.IsInf(f, 0)
			case "binary":
				_, ok = s.OnError.(bool)
			case "categorical/single":
				_, ok = s.OnError.(string)
			}
			if !ok {
				return invalid(p+".on_error", "on_error must be a number for numeric types, a boolean for binary, a string for categorical/single, and is not taken by %s", s.Type)
			}
		}
	}
	return nil
}

// AnalyticsRequest is a parsed analytics query.
type AnalyticsRequest struct {
	Filter   []byte
	Oldest   *time.Time
	Newest   *time.Time
	Interval int // minutes; 0 is one bucket over the window
	Rate     *float64
	Specs    []MetricSpec
}

// Bucket is one time bucket.
type Bucket struct {
	Timestamp time.Time      `json:"timestamp"`
	Interval  int            `json:"interval"`
	Metrics   map[string]any `json:"metrics"`
}

// AnalyticsResult is the answer with the window actually used.
type AnalyticsResult struct {
	Buckets  []Bucket
	Oldest   time.Time
	Newest   time.Time
	Interval int
	Specs    []MetricSpec
}

var fallbackIntervals = []int{1, 5, 15, 30, 60, 180, 360, 720, 1440, 4320, 10080, 20160, 43200}

// maxBuckets bounds the number of buckets, as the compatible platform does.
const maxBuckets = 1024

// window applies the defaults: the 30 days ending at the next UTC
// midnight; an interval that would make more than 1024 buckets is widened.
func (r AnalyticsRequest) window(now time.Time) (oldest, newest time.Time, interval int) {
	newest = now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	if r.Newest != nil {
		newest = *r.Newest
	}
	oldest = newest.Add(-30 * 24 * time.Hour)
	if r.Oldest != nil {
		oldest = *r.Oldest
	}
	minutes := int(math.Ceil(newest.Sub(oldest).Minutes()))
	if minutes < 1 {
		minutes = 1
	}
	interval = r.Interval
	if interval <= 0 {
		return oldest, newest, minutes
	}
	if (minutes+interval-1)/interval > maxBuckets {
		interval = fallbackIntervals[len(fallbackIntervals)-1]
		for _, iv := range fallbackIntervals {
			if (minutes+iv-1)/iv <= maxBuckets {
				interval = iv
				break
			}
		}
	}
	return oldest, newest, interval
}

// specCols is how one spec's value is read: has (the key exists), text
// (its leaf text) and, for categorical/multiple only, list (the texts of
// its elements). Pointers in list (a repeat of a long text) are resolved
// here, not in SQL (see elementsIn): longIdx and longText are the row's
// long texts that pointers may name, with their indexes, sent only when
// list holds a pointer.
type specCols struct {
	has, text, list, longIdx, longText string
}

func specExprs(c *compiler, s MetricSpec) specCols {
	out := specCols{list: "emptyArrayString()", longIdx: "emptyArrayUInt32()", longText: "emptyArrayString()"}
	if col, ok := columnPaths[s.Path]; ok {
		out.has, out.text = col+" != ''", col
		if s.Type == "categorical/multiple" {
			out.list = "[" + col + "]"
		}
		return out
	}
	key := strings.TrimPrefix(s.Path, "attributes.")
	if h, leaf, ok := cumulativeKey(key); ok {
		c.rollup = true
		out.has, out.text = h, leaf
		if s.Type == "categorical/multiple" {
			out.list = "[" + leaf + "]"
		}
		return out
	}
	out.has = "arrayExists(k -> k = " + c.arg(key) + " OR position(k, " + c.arg(key+".") + ") = 1, attr_keys)"
	out.text = resolved(func() string { return "attr_values[indexOf(attr_keys, " + c.arg(key) + ")]" })
	if s.Type == "categorical/multiple" {
		out.list = c.elementsOf(key)
		long := fmt.Sprintf("length(x) > %d AND NOT startsWith(x, '\\xEF\\xBF\\xBF\\x00')", chspans.LongLeaf)
		pointers := "arrayExists(x -> startsWith(x, '\\xEF\\xBF\\xBF\\x00'), " + c.elementsOf(key) + ")"
		out.longIdx = "if(" + pointers + ", arrayFilter((i, x) -> " + long + ", arrayEnumerate(attr_values), attr_values), emptyArrayUInt32())"
		out.longText = "if(" + pointers + ", arrayFilter(x -> " + long + ", attr_values), emptyArrayString())"
	}
	return out
}

// resolveList replaces the pointers in list by the texts they name.
func resolveList(list []string, idx []uint32, texts []string) []string {
	if len(idx) == 0 {
		return list
	}
	for i, v := range list {
		if !strings.HasPrefix(v, chspans.PointerMark) || len(v) >= 16 {
			continue
		}
		n, err := strconv.ParseUint(v[len(chspans.PointerMark):], 10, 32)
		if err != nil {
			continue
		}
		if j, found := slices.BinarySearch(idx, uint32(n)); found && j < len(texts) {
			list[i] = texts[j]
		}
	}
	return list
}

// Analytics runs an analytics query for the project.
func (s *Service) Analytics(ctx context.Context, project string, req AnalyticsRequest) (AnalyticsResult, error) {
	f, err := Compile(req.Filter, "filter", s.store.limits.Filter)
	if err != nil {
		return AnalyticsResult{}, err
	}
	specs := req.Specs
	if len(specs) == 0 {
		specs = DefaultSpecs()
	}
	oldest, newest, interval := req.window(time.Now())
	// The value expressions come before the filter in the statement, so
	// their arguments go first.
	c := &compiler{rollup: f.Rollup, lim: s.store.limits.Filter, aliasPrefix: "_m"}
	cols, err := specColumns(c, specs)
	if err != nil {
		return AnalyticsResult{}, err
	}
	where := "parent_id = '' AND created_us >= ? AND created_us < ? AND (" + f.SQL + ")"
	args := append([]any{oldest.UnixMicro(), newest.UnixMicro()}, f.Args...)
	if req.Rate != nil {
		where += " AND reinterpretAsUInt32(reverse(unhex(substring(trace_id, 1, 8)))) % 100 < ?"
		args = append(args, uint32(*req.Rate*100))
	}
	j := joinClause{}
	if c.rollup {
		scope := "trace_id IN (SELECT trace_id FROM spans WHERE project_id = ? AND parent_id = '' AND created_us >= ? AND created_us < ?)"
		sql, jargs := rollupJoin(scope, []any{nil, oldest.UnixMicro(), newest.UnixMicro()})
		j = joinClause{sql: sql, args: jargs}
	}
	rows, err := s.store.values(ctx, project, j, cols, c.args, where, args)
	if err != nil {
		return AnalyticsResult{}, err
	}
	step := time.Duration(interval) * time.Minute
	byStart := map[int64][]valueRow{}
	for _, r := range rows {
		t := time.UnixMicro(r.created).UTC()
		n := int64(t.Sub(oldest) / step)
		byStart[n] = append(byStart[n], r)
	}
	keys := make([]int64, 0, len(byStart))
	for k := range byStart {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := AnalyticsResult{Oldest: oldest, Newest: newest, Interval: interval, Specs: specs, Buckets: []Bucket{}}
	for _, k := range keys {
		b := Bucket{Timestamp: oldest.Add(time.Duration(k) * step), Interval: interval, Metrics: metricsOf(specs, byStart[k])}
		out.Buckets = append(out.Buckets, b)
	}
	return out, nil
}

// specColumns compiles how each spec's value is read. Specs count against
// the filter limits as conditions with a key; errors name specs[i].
func specColumns(c *compiler, specs []MetricSpec) ([]specCols, error) {
	cols := make([]specCols, 0, len(specs))
	for i, sp := range specs {
		p := fmt.Sprintf("specs[%d]", i)
		if err := c.one(p); err != nil {
			return nil, err
		}
		if err := c.key(sp.Path, p+".path"); err != nil {
			return nil, err
		}
		cols = append(cols, specExprs(c, sp))
	}
	return cols, nil
}

// metricsOf is every spec's statistics over rows, keyed by path: a
// bucket's metrics, or a group's.
func metricsOf(specs []MetricSpec, rows []valueRow) map[string]any {
	m := make(map[string]any, len(specs))
	for i, sp := range specs {
		m[sp.Path] = stats(sp, rows, i)
	}
	return m
}

// valueRow is one root span's trace, created time, whether it recorded an
// exception, and per-spec values.
type valueRow struct {
	trace   string
	created int64
	errored bool
	has     []bool
	text    []string
	list    [][]string
}

// values reads created_us and, per spec, (has, text, list).
func (s *Store) values(ctx context.Context, project string, j joinClause, cols []specCols, colArgs []any, where string, args []any) ([]valueRow, error) {
	from, jargs := j.from(project)
	sel := make([]string, 0, 5*len(cols))
	for _, c := range cols {
		sel = append(sel, "toUInt8("+c.has+")", c.text, c.list, c.longIdx, c.longText)
	}
	q := "SELECT trace_id, created_us, toUInt8(has(event_names, 'exception')), " + strings.Join(sel, ", ") + " FROM " + from + " WHERE " + live + " AND " + where
	all := append(append(append(append([]any{}, colArgs...), jargs...), project), args...)
	rows, cancel, err := s.query(ctx, "query analytics", q, all...)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer rows.Close()
	n := len(cols)
	var out []valueRow
	for rows.Next() {
		r := valueRow{has: make([]bool, n), text: make([]string, n), list: make([][]string, n)}
		hs := make([]uint8, n)
		idx := make([][]uint32, n)
		texts := make([][]string, n)
		var errored uint8
		dst := []any{&r.trace, &r.created, &errored}
		for i := 0; i < n; i++ {
			dst = append(dst, &hs[i], &r.text[i], &r.list[i], &idx[i], &texts[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, s.storeErr("read analytics", err)
		}
		r.errored = errored != 0
		for i, h := range hs {
			r.has[i] = h != 0
			r.list[i] = resolveList(r.list[i], idx[i], texts[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.storeErr("read analytics", err)
	}
	return out, nil
}

var pctLevels = []float64{0.05, 0.5, 2.5, 5, 10, 25, 50, 75, 90, 95, 97.5, 99.5, 99.95}

// pctKeys are the keys of the levels statistics use, formatted once: a
// grouped read computes them for every group (a tenth of its time).
var pctKeys = func() map[float64]string {
	m := map[float64]string{}
	for _, p := range append([]float64{100 - 0.05, 100 - 0.5, 100 - 2.5, 100 - 5, 100 - 10, 100 - 25}, pctLevels...) {
		m[p] = "p" + fmt.Sprintf("%05.2f", p)
	}
	return m
}()

func pctKey(p float64) string {
	if k, ok := pctKeys[p]; ok {
		return k
	}
	return "p" + fmt.Sprintf("%05.2f", p)
}

// stats computes one spec's statistics over a bucket's rows.
func stats(sp MetricSpec, rows []valueRow, i int) map[string]any {
	out := map[string]any{"type": sp.Type}
	switch sp.Type {
	case "numeric/continuous", "numeric/discrete":
		var xs []float64
		for _, r := range rows {
			if !r.has[i] {
				if f, ok := sp.OnError.(float64); ok && r.errored {
					xs = append(xs, f)
				}
				continue
			}
			if f, err := strconv.ParseFloat(r.text[i], 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				xs = append(xs, f)
			}
		}
		out["count"] = len(xs)
		if len(xs) == 0 {
			return out
		}
		numericStats(out, sp, xs)
		if sp.Type == "numeric/discrete" {
			texts := make([]string, len(xs))
			for k, x := range xs {
				texts[k] = strconv.FormatFloat(x, 'f', -1, 64)
			}
			freq(out, texts, true)
		}
	case "binary", "categorical/single":
		var vals []string
		for _, r := range rows {
			switch {
			case r.has[i]:
				vals = append(vals, r.text[i])
			case r.errored && sp.OnError != nil:
				vals = append(vals, fmt.Sprint(sp.OnError)) // true, false, or the category
			}
		}
		out["count"] = len(vals)
		freq(out, vals, false)
	case "categorical/multiple":
		var vals []string
		n := 0
		for _, r := range rows {
			if len(r.list[i]) > 0 {
				n++
				vals = append(vals, r.list[i]...)
			}
		}
		out["count"] = n
		freq(out, vals, false)
	default: // string, json, none, *: presence only
		n := 0
		for _, r := range rows {
			if r.has[i] {
				n++
			}
		}
		out["count"] = n
	}
	return out
}

func numericStats(out map[string]any, sp MetricSpec, xs []float64) {
	sort.Float64s(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	lo, hi := xs[0], xs[len(xs)-1]
	out["sum"], out["mean"], out["min"], out["max"], out["range"] = sum, sum/float64(len(xs)), lo, hi, hi-lo
	pcts := map[string]float64{}
	for _, p := range pctLevels {
		pcts[pctKey(p)] = quantile(xs, p/100)
	}
	out["pcts"] = pcts
	// Spreads and skews over symmetric percentile pairs: interquantile
	// ranges, coefficients of quantile variation, and Bowley skewness.
	iqrs, cqvs, pscs := map[string]float64{}, map[string]float64{}, map[string]float64{}
	med := quantile(xs, 0.5)
	for _, p := range []float64{25, 10, 5, 2.5, 0.5, 0.05} {
		a, b := quantile(xs, p/100), quantile(xs, 1-p/100)
		k := pctKey(p) + "-" + pctKey(100-p)
		iqrs[k] = b - a
		if b+a != 0 {
			cqvs[k] = (b - a) / (b + a)
		}
		if b-a != 0 {
			pscs[k] = (b + a - 2*med) / (b - a)
		}
	}
	out["iqrs"], out["cqvs"], out["pscs"] = iqrs, cqvs, pscs
	out["hist"] = hist(sp, xs)
}

// quantile interpolates linearly in sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (xs[i+1]-xs[i])*(pos-float64(i))
}

func hist(sp MetricSpec, xs []float64) []map[string]any {
	bins := 20
	if sp.Bins != nil {
		bins = *sp.Bins
	}
	lo, hi := xs[0], xs[len(xs)-1]
	if sp.VMin != nil {
		lo = *sp.VMin
	}
	if sp.VMax != nil {
		hi = *sp.VMax
	}
	if hi <= lo {
		bins = 1
	}
	width := (hi - lo) / float64(bins)
	counts := make([]int, bins)
	for _, x := range xs {
		if x < lo || x > hi {
			continue
		}
		b := bins - 1
		if width > 0 {
			b = int((x - lo) / width)
			if b >= bins {
				b = bins - 1
			}
		}
		counts[b]++
	}
	out := make([]map[string]any, 0, bins)
	for b, n := range counts {
		out = append(out, map[string]any{"bin": b, "edge": []float64{lo + float64(b)*width, lo + float64(b+1)*width},
			"count": n, "density": float64(n) / float64(len(xs))})
	}
	return out
}

func freq(out map[string]any, vals []string, discrete bool) {
	counts := map[string]int{}
	for _, v := range vals {
		counts[v]++
	}
	type vc struct {
		v string
		n int
	}
	l := make([]vc, 0, len(counts))
	for v, n := range counts {
		l = append(l, vc{v, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].v < l[j].v })
	fs := make([]map[string]any, 0, len(l))
	for _, e := range l {
		var v any = e.v
		if discrete {
			v, _ = strconv.ParseFloat(e.v, 64)
		} else if b, err := strconv.ParseBool(e.v); err == nil && (e.v == "true" || e.v == "false") {
			v = b
		}
		fs = append(fs, map[string]any{"value": v, "count": e.n, "density": float64(e.n) / float64(len(vals))})
	}
	out["freq"] = fs
	out["uniq"] = len(counts)
}

// Legacy is the old analytics shape (/tracing/spans/analytics): per bucket
// totals and errors of count, duration, costs and tokens.
func (s *Service) Legacy(ctx context.Context, project, focus string, req AnalyticsRequest) ([]map[string]any, error) {
	f, err := Compile(req.Filter, "filter", s.store.limits.Filter)
	if err != nil {
		return nil, err
	}
	oldest, newest, interval := req.window(time.Now())
	scope := "parent_id = '' AND "
	costKey, tokenKey := "ag.metrics.costs.cumulative.total", "ag.metrics.tokens.cumulative.total"
	if focus != "trace" {
		scope = ""
		costKey, tokenKey = "ag.metrics.costs.incremental.total", "ag.metrics.tokens.incremental.total"
	}
	c := &compiler{rollup: f.Rollup, aliasPrefix: "_m"}
	specs := []MetricSpec{{Path: "attributes." + costKey}, {Path: "attributes." + tokenKey}}
	var cols []specCols
	for _, sp := range specs {
		cols = append(cols, specExprs(c, sp))
	}
	// Errors are spans with an exception event; duration is end - start.
	cols = append(cols, specCols{has: "has(event_names, 'exception')", text: "toString(end_us - start_us)",
		list: "emptyArrayString()", longIdx: "emptyArrayUInt32()", longText: "emptyArrayString()"})
	where := scope + "created_us >= ? AND created_us < ? AND (" + f.SQL + ")"
	args := append([]any{oldest.UnixMicro(), newest.UnixMicro()}, f.Args...)
	j := joinClause{}
	if c.rollup {
		sql, jargs := rollupJoin("trace_id IN (SELECT trace_id FROM spans WHERE project_id = ? AND created_us >= ? AND created_us < ?)",
			[]any{nil, oldest.UnixMicro(), newest.UnixMicro()})
		j = joinClause{sql: sql, args: jargs}
	}
	rows, err := s.store.values(ctx, project, j, cols, c.args, where, args)
	if err != nil {
		return nil, err
	}
	step := time.Duration(interval) * time.Minute
	type agg struct{ count, duration, costs, tokens float64 }
	total, errored := map[int64]*agg{}, map[int64]*agg{}
	for _, r := range rows {
		n := int64(time.UnixMicro(r.created).UTC().Sub(oldest) / step)
		for _, m := range []map[int64]*agg{total, errored} {
			if m[n] == nil {
				m[n] = &agg{}
			}
		}
		dur, _ := strconv.ParseFloat(r.text[2], 64)
		cost, _ := strconv.ParseFloat(r.text[0], 64)
		tok, _ := strconv.ParseFloat(r.text[1], 64)
		add := func(a *agg) { a.count++; a.duration += dur / 1000; a.costs += cost; a.tokens += tok }
		add(total[n])
		if r.has[2] {
			add(errored[n])
		}
	}
	keys := make([]int64, 0, len(total))
	for k := range total {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := []map[string]any{}
	for _, k := range keys {
		m := func(a *agg) map[string]any {
			return map[string]any{"count": a.count, "duration": a.duration, "costs": a.costs, "tokens": a.tokens}
		}
		out = append(out, map[string]any{"timestamp": oldest.Add(time.Duration(k) * step), "interval": interval, "total": m(total[k]), "errors": m(errored[k])})
	}
	return out, nil
}
