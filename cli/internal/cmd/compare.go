package cmd

import (
	"sort"

	"github.com/assayhq/assay/cli/internal/output"
)

// compareTable flattens the comparison's metric rows into a table: the
// first list of objects found under "metrics" (or "comparison.metrics"),
// one row each, nested objects flattened one level (delta.ci_low).
func compareTable(out obj, runIDs []string) output.Table {
	var list []any
	for _, path := range [][]string{{"metrics"}, {"comparison", "metrics"}, {"compare", "metrics"}} {
		var v any = out
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if l, ok := v.([]any); ok {
			list = l
			break
		}
	}
	t := output.Table{Raw: out}
	if list == nil {
		t.Header = []string{"run_ids", "answer"}
		t.Rows = [][]string{{output.Cell(runIDs), output.Cell(out)}}
		return t
	}
	var keys []string
	seen := map[string]bool{}
	rows := make([]map[string]string, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		row := map[string]string{}
		flat := func(k string, v any) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
			row[k] = output.Cell(v)
		}
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if inner, ok := m[k].(map[string]any); ok && len(inner) <= 8 {
				iks := make([]string, 0, len(inner))
				for ik := range inner {
					iks = append(iks, ik)
				}
				sort.Strings(iks)
				for _, ik := range iks {
					flat(k+"."+ik, inner[ik])
				}
				continue
			}
			flat(k, m[k])
		}
		rows = append(rows, row)
	}
	t.Header = keys
	for _, r := range rows {
		cells := make([]string, len(keys))
		for i, k := range keys {
			cells[i] = r[k]
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
