package cmd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/output"
)

func (a *app) tracesCmd() *cobra.Command {
	tr := group("traces", "Follow new traces and show one as a tree", "trace")
	tr.AddCommand(a.tracesTail(), a.tracesGet())
	return tr
}

var traceHeader = []string{"trace_id", "start_time", "name", "type", "status", "duration_ms", "inputs", "outputs"}

func (a *app) tracesTail() *cobra.Command {
	var filters, attrs []string
	var name, app, filtering string
	var since, interval, forDur time.Duration
	var maxN int
	c := &cobra.Command{
		Use:   "tail",
		Short: "Print new traces as they arrive, polling the query API",
		Long: `Polls POST /api/traces/query every --interval and prints each trace once, oldest
first: as table rows, JSON lines (--output json) or CSV rows. Filters combine
with "and": --name (root span name), --app (an application slug among the
references), --filter FIELD=VALUE (a span field: trace_type, span_type,
status_code, session_id, …), --attribute KEY=VALUE (ag.* or any attribute), or
a whole --filtering JSON object of the query language. It runs until
interrupted, --count traces or --for a duration.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var conds []any
			if name != "" {
				conds = append(conds, obj{"field": "span_name", "value": name})
			}
			if app != "" {
				conds = append(conds, obj{"field": "references", "operator": "in", "value": []any{obj{"slug": app}}})
			}
			for _, f := range filters {
				k, v, ok := strings.Cut(f, "=")
				if !ok || k == "" {
					return usagef("--filter wants FIELD=VALUE, not %q", f)
				}
				conds = append(conds, obj{"field": k, "value": v})
			}
			for _, f := range attrs {
				k, v, ok := strings.Cut(f, "=")
				if !ok || k == "" {
					return usagef("--attribute wants KEY=VALUE, not %q", f)
				}
				conds = append(conds, obj{"field": "attributes", "key": k, "value": v})
			}
			if filtering != "" {
				var f any
				if err := json.Unmarshal([]byte(filtering), &f); err != nil {
					return usagef("--filtering is not JSON: %v", err)
				}
				conds = append(conds, f)
			}
			oldest := time.Now().Add(-since).UTC()
			ctx := c.Context()
			var deadline <-chan time.Time
			if forDur > 0 {
				deadline = time.After(forDur)
			}
			seen := map[string]bool{}
			printed := 0
			pr := newRowPrinter(a.stdout, a.out, traceHeader)
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				body := obj{"windowing": obj{"oldest": oldest.Format(time.RFC3339Nano), "limit": 100}}
				if len(conds) > 0 {
					body["filtering"] = obj{"operator": "and", "conditions": conds}
				}
				var out struct {
					Traces []obj `json:"traces"`
				}
				if err := cl.JSON(ctx, "POST", "/api/traces/query", body, &out); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				var fresh []traceSummary
				for _, t := range out.Traces {
					s := summarize(t)
					if s.id == "" || seen[s.id] {
						continue
					}
					seen[s.id] = true
					fresh = append(fresh, s)
				}
				sort.Slice(fresh, func(i, j int) bool { return fresh[i].start < fresh[j].start })
				for _, s := range fresh {
					if err := pr.print(s.row(), s.raw); err != nil {
						return err
					}
					printed++
					if maxN > 0 && printed >= maxN {
						return nil
					}
				}
				select {
				case <-ctx.Done():
					return nil
				case <-deadline:
					return nil
				case <-tick.C:
				}
			}
		},
	}
	f := c.Flags()
	f.StringVar(&name, "name", "", "root span name")
	f.StringVar(&app, "app", "", "application slug referenced by the trace")
	f.StringArrayVar(&filters, "filter", nil, "FIELD=VALUE condition on a span field (repeatable)")
	f.StringArrayVar(&attrs, "attribute", nil, "KEY=VALUE condition on an attribute (repeatable)")
	f.StringVar(&filtering, "filtering", "", "a condition of the query language, as JSON")
	f.DurationVar(&since, "since", 0, "also print traces started this long ago (default: only new ones)")
	f.DurationVar(&interval, "interval", 2*time.Second, "time between polls")
	f.DurationVar(&forDur, "for", 0, "stop after this long")
	f.IntVar(&maxN, "count", 0, "stop after this many traces")
	return c
}

// rowPrinter prints rows one at a time: a table header once, JSON lines,
// or CSV, so a follower's output can be piped as it grows.
type rowPrinter struct {
	w      io.Writer
	format string
	header []string
	csv    *csv.Writer
	n      int
}

func newRowPrinter(w io.Writer, format string, header []string) *rowPrinter {
	return &rowPrinter{w: w, format: format, header: header}
}

func (p *rowPrinter) print(row []string, raw any) error {
	defer func() { p.n++ }()
	switch p.format {
	case "json":
		b, err := json.Marshal(raw)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	case "csv":
		if p.csv == nil {
			p.csv = csv.NewWriter(p.w)
			p.csv.Write(p.header)
		}
		p.csv.Write(row)
		p.csv.Flush()
		return p.csv.Error()
	}
	if p.n == 0 {
		fmt.Fprintln(p.w, strings.ToUpper(strings.Join(p.header, "  ")))
	}
	cells := make([]string, len(row))
	for i, c := range row {
		cells[i] = clip(c, 40)
	}
	_, err := fmt.Fprintln(p.w, strings.Join(cells, "  "))
	return err
}

func clip(s string, n int) string {
	s = strings.NewReplacer("\n", "⏎", "\t", " ").Replace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

type traceSummary struct {
	id, start, name, typ, status, dur, inputs, outputs string
	raw                                                any
}

func (s traceSummary) row() []string {
	return []string{s.id, s.start, s.name, s.typ, s.status, s.dur, s.inputs, s.outputs}
}

// summarize reads a trace of the query API ({trace_id, spans} with spans
// a list or a tree keyed by name) down to its root span.
func summarize(t obj) traceSummary {
	s := traceSummary{id: str(t, "trace_id"), raw: t}
	spans := flatten(t["spans"])
	if len(spans) == 0 {
		if _, ok := t["span_id"]; ok {
			spans = []obj{t}
		}
	}
	var root obj
	for _, sp := range spans {
		if sp["parent_id"] == nil || str(sp, "parent_id") == "" {
			root = sp
			break
		}
	}
	if root == nil && len(spans) > 0 {
		root = spans[0]
	}
	if root == nil {
		return s
	}
	if s.id == "" {
		s.id = str(root, "trace_id")
	}
	s.start, s.name, s.status = str(root, "start_time"), str(root, "span_name"), strings.TrimPrefix(str(root, "status_code"), "STATUS_CODE_")
	s.typ = first(str(root, "attributes", "ag", "type", "trace"), str(root, "trace_type"))
	s.dur = durationMS(root)
	ag := sub(root, "attributes", "ag", "data")
	s.inputs, s.outputs = output.Cell(ag["inputs"]), output.Cell(ag["outputs"])
	return s
}

func durationMS(sp obj) string {
	st, err1 := time.Parse(time.RFC3339Nano, str(sp, "start_time"))
	en, err2 := time.Parse(time.RFC3339Nano, str(sp, "end_time"))
	if err1 != nil || err2 != nil {
		return ""
	}
	return output.Num(float64(en.Sub(st).Microseconds()) / 1000)
}

// flatten lists the spans of a list, or of a tree keyed by span name whose
// values are a span or a list of spans with children under "spans".
func flatten(v any) []obj {
	var out []obj
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if _, ok := x["span_id"]; ok {
				out = append(out, x)
				if kids, ok := x["spans"]; ok {
					walk(kids)
				}
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

func (a *app) tracesGet() *cobra.Command {
	return &cobra.Command{
		Use:   "get TRACE_ID",
		Short: "Show a trace as a tree of spans (name, type, duration, status)",
		Long: `Fetches GET /api/tracing/traces/{id}. --output table draws the tree; json prints
the server's answer; csv prints one row per span with its depth.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var out obj
			if err := cl.JSON(c.Context(), "GET", "/api/tracing/traces/"+pathEscape(args[0]), nil, &out); err != nil {
				return err
			}
			if count(out) == 0 {
				return api.NotFound("no trace %s in this project", args[0])
			}
			if a.out == "json" {
				return output.JSON(a.stdout, out)
			}
			var roots []obj
			for _, t := range sub(out, "traces") {
				if m, ok := t.(map[string]any); ok {
					roots = append(roots, children(m["spans"])...)
				}
			}
			if a.out == "csv" {
				t := output.Table{Header: []string{"depth", "span_id", "parent_id", "name", "type", "status", "start_time", "duration_ms"}}
				var walk func(list []obj, depth int)
				walk = func(list []obj, depth int) {
					for _, s := range list {
						t.Rows = append(t.Rows, []string{fmt.Sprint(depth), str(s, "span_id"), str(s, "parent_id"), str(s, "span_name"),
							first(str(s, "span_type"), str(s, "attributes", "ag", "type", "span")), strings.TrimPrefix(str(s, "status_code"), "STATUS_CODE_"),
							str(s, "start_time"), durationMS(s)})
						walk(children(s["spans"]), depth+1)
					}
				}
				walk(roots, 0)
				return a.write(t)
			}
			fmt.Fprintf(a.stdout, "trace %s\n", args[0])
			drawTree(a.stdout, roots, "")
			return nil
		},
	}
}

// children are the direct children of a tree level (a map keyed by span
// name, each value a span or a list of spans with the same name), oldest
// first.
func children(v any) []obj {
	var out []obj
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
	case map[string]any:
		if _, ok := x["span_id"]; ok {
			return []obj{x}
		}
		for _, e := range x {
			out = append(out, children(e)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return str(out[i], "start_time") < str(out[j], "start_time") })
	return out
}

func drawTree(w io.Writer, list []obj, prefix string) {
	for i, s := range list {
		branch, next := "├── ", "│   "
		if i == len(list)-1 {
			branch, next = "└── ", "    "
		}
		typ := first(str(s, "span_type"), str(s, "attributes", "ag", "type", "span"))
		line := fmt.Sprintf("%s%s%s", prefix, branch, str(s, "span_name"))
		if typ != "" {
			line += " [" + typ + "]"
		}
		if d := durationMS(s); d != "" {
			line += " " + d + " ms"
		}
		if st := strings.TrimPrefix(str(s, "status_code"), "STATUS_CODE_"); st != "" && st != "UNSET" && st != "OK" {
			line += " " + st
		}
		if out, ok := sub(s, "attributes", "ag", "data")["outputs"]; ok {
			line += "  → " + clip(output.Cell(out), 60)
		}
		fmt.Fprintln(w, line)
		drawTree(w, children(s["spans"]), prefix+next)
	}
}
