package query

import (
	"fmt"
	"strings"
)

// Cumulative metrics at query time.
//
// The stored ag.metrics.*.cumulative values are rolled up within one ingest
// request only; spans of one trace often arrive in several (an OTel batch
// processor exports children before their parents). Reads roll up again
// over the whole stored trace (Service.result); filters must agree with
// what reads return, so a condition on a cumulative metric is evaluated on
// a roll-up computed by ClickHouse over the stored incremental values,
// never on the stored cumulative ones.
//
// The roll-up follows spanmodel.RollUp: cumulative = own incremental +
// descendants' incremental, for tokens and costs (prompt, completion,
// total) and errors; a span whose parent is not stored counts as a root;
// a group exists only when one of its values is non-zero. ClickHouse 18.16
// has no recursion, so ancestors are found by repeated parent lookups:
// a span contributes to at most rollupDepth levels of ancestors.

// rollupDepth bounds how many ancestor levels a span's metrics reach.
const rollupDepth = 32

// rollupKeys maps each rolled-up attribute key to its column.
var rollupKeys = map[string]string{
	"ag.metrics.tokens.cumulative.prompt":     "rc_tokens_prompt",
	"ag.metrics.tokens.cumulative.completion": "rc_tokens_completion",
	"ag.metrics.tokens.cumulative.total":      "rc_tokens_total",
	"ag.metrics.costs.cumulative.prompt":      "rc_costs_prompt",
	"ag.metrics.costs.cumulative.completion":  "rc_costs_completion",
	"ag.metrics.costs.cumulative.total":       "rc_costs_total",
	"ag.metrics.errors.cumulative":            "rc_errors",
}

// rollupGroups are the keys that exist when one of their columns is non-zero.
var rollupGroups = map[string][]string{
	"ag.metrics.tokens.cumulative": {"rc_tokens_prompt", "rc_tokens_completion", "rc_tokens_total"},
	"ag.metrics.costs.cumulative":  {"rc_costs_prompt", "rc_costs_completion", "rc_costs_total"},
	"ag.metrics.errors.cumulative": {"rc_errors"},
}

// rollupSpec gives each column the incremental key it sums.
var rollupSpec = []struct{ col, key string }{
	{"rc_tokens_prompt", "ag.metrics.tokens.incremental.prompt"},
	{"rc_tokens_completion", "ag.metrics.tokens.incremental.completion"},
	{"rc_tokens_total", "ag.metrics.tokens.incremental.total"},
	{"rc_costs_prompt", "ag.metrics.costs.incremental.prompt"},
	{"rc_costs_completion", "ag.metrics.costs.incremental.completion"},
	{"rc_costs_total", "ag.metrics.costs.incremental.total"},
	{"rc_errors", "ag.metrics.errors.incremental"},
}

// cumulativeKey tells whether key is read from the roll-up: has and leaf are
// the SQL of "the key exists" and "its value as text". ok is false for
// keys outside the cumulative metrics.
func cumulativeKey(key string) (has, leaf string, ok bool) {
	if col, found := rollupKeys[key]; found {
		group, isGroup := rollupGroups[key] // errors.cumulative is its own group
		if !isGroup {
			group = rollupGroups[key[:strings.LastIndex(key, ".")]]
		}
		return nonZero(group), "toString(" + col + ")", true
	}
	if cols, found := rollupGroups[key]; found {
		// A group itself has no leaf value.
		return nonZero(cols), "''", true
	}
	for g := range rollupGroups {
		if strings.HasPrefix(key, g+".") {
			// The roll-up writes only prompt, completion and total.
			return "0", "''", true
		}
	}
	return "", "", false
}

func nonZero(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c + " != 0"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// rollupJoin is the JOIN that adds the rc_* columns to spans rows. Its
// first argument is the project (nil here, set by the store); scope, when
// set, limits the traces rolled up (SQL over the spans table, with args).
//
// ClickHouse 18.16 drops a subquery column that an outer SELECT uses only
// inside a lambda; each level therefore also names its lambdas' columns in
// a WHERE notEmpty(...) that is always true.
func rollupJoin(scope string, scopeArgs []any) (string, []any) {
	var gathers, arrays, tuple, sums []string
	for i, s := range rollupSpec {
		gathers = append(gathers, fmt.Sprintf("groupArray(toFloat64OrZero(attr_values[indexOf(attr_keys, '%s')])) AS a_%s", s.key, s.col))
		arrays = append(arrays, "a_"+s.col)
		tuple = append(tuple, "a_"+s.col+"[j]")
		sums = append(sums, fmt.Sprintf("sum(pair.%d) AS %s", i+2, s.col))
	}
	keep := func(cols ...string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = "notEmpty(" + c + ")"
		}
		return " WHERE " + strings.Join(parts, " AND ")
	}
	perTrace := "SELECT trace_id, groupArray(span_id) AS ids, groupArray(parent_id) AS parents, " + strings.Join(gathers, ", ") +
		" FROM spans FINAL WHERE " + live
	args := []any{nil}
	if scope != "" {
		perTrace += " AND (" + scope + ")"
		args = append(args, scopeArgs...)
	}
	perTrace += " GROUP BY trace_id"
	cols := strings.Join(arrays, ", ")
	// p1 is each span's parent as an index into ids (0: none stored, so the
	// span counts as a root); level k+1 is p1 applied to level k, and index
	// 0 reads as 0, so a chain stops at its root.
	parents := "SELECT trace_id, ids, " + cols + ", arrayMap(p -> indexOf(ids, p), parents) AS p1 FROM (" + perTrace + ")" + keep("ids", "parents")
	levels := []string{"p1"}
	chain := []string{"j", "p1[j]"}
	for k := 2; k <= rollupDepth; k++ {
		levels = append(levels, fmt.Sprintf("arrayMap(i -> p1[i], p%d) AS p%d", k-1, k))
		chain = append(chain, fmt.Sprintf("p%d[j]", k))
	}
	ancestors := "SELECT trace_id, ids, " + cols + ", " + strings.Join(levels, ", ") + " FROM (" + parents + ")" + keep("p1")
	used := append(append([]string{"ids"}, arrays...), "p1")
	for k := 2; k <= rollupDepth; k++ {
		used = append(used, fmt.Sprintf("p%d", k))
	}
	// One row per (span, ancestor-or-self): the ancestor's id and the span's
	// incremental values ...
	pairs := "SELECT trace_id, arrayJoin(arrayJoin(arrayMap(j -> arrayMap(a -> (ids[a], " + strings.Join(tuple, ", ") +
		"), arrayDistinct(arrayFilter(x -> x != 0, [" + strings.Join(chain, ", ") + "]))), arrayEnumerate(ids)))) AS pair FROM (" +
		ancestors + ")" + keep(used...)
	// ... summed per ancestor.
	rolled := "SELECT trace_id, pair.1 AS span_id, " + strings.Join(sums, ", ") + " FROM (" + pairs + ") GROUP BY trace_id, span_id"
	return "ANY LEFT JOIN (" + rolled + ") USING (trace_id, span_id)", args
}
