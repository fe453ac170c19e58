package query

import (
	"encoding/json"

	"github.com/assayhq/assay/pkg/chspans"
)

// SpanJSON renders a span the way clients read it: null and empty fields
// omitted, times in ISO 8601, outputs saved as {"__default__": v} unwrapped.
func SpanJSON(p Parsed) map[string]any {
	m := map[string]any{
		"trace_id":    p.TraceID,
		"span_id":     p.SpanID,
		"trace_type":  p.TraceType,
		"span_type":   p.SpanType,
		"span_kind":   p.SpanKind,
		"span_name":   p.SpanName,
		"start_time":  chspans.FormatTime(p.StartUS),
		"end_time":    chspans.FormatTime(p.EndUS),
		"status_code": p.StatusCode,
		"attributes":  unwrapDefault(p.Attrs),
		"created_at":  chspans.FormatTime(p.CreatedUS),
	}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	put("parent_id", p.ParentID)
	put("status_message", p.StatusMessage)
	put("created_by_id", p.CreatedByID)
	if p.ParentID == "" {
		put("session_id", p.SessionID)
		put("user_id", p.UserID)
		put("agent_id", p.AgentID)
	}
	for k, v := range map[string]string{"events": p.Events, "references": p.Refs, "hashes": p.Hashes, "links": p.Links} {
		if v != "" {
			m[k] = json.RawMessage(v)
		}
	}
	if p.Links == "" && p.LinksSet == 1 {
		m["links"] = []any{}
	}
	return m
}

func unwrapDefault(attrs map[string]any) map[string]any {
	ag, _ := attrs["ag"].(map[string]any)
	data, _ := ag["data"].(map[string]any)
	if out, ok := data["outputs"].(map[string]any); ok {
		if v, ok := out["__default__"]; ok {
			data["outputs"] = v
		}
	}
	return attrs
}

// Spans renders a flat span list.
func Spans(ps []Parsed) []map[string]any {
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, SpanJSON(p))
	}
	return out
}

// TraceOrder returns the trace ids of ps in first-seen order.
func TraceOrder(ps []Parsed) []string {
	seen := map[string]bool{}
	var ids []string
	for _, p := range ps {
		if !seen[p.TraceID] {
			seen[p.TraceID] = true
			ids = append(ids, p.TraceID)
		}
	}
	return ids
}

// Trees groups spans by trace into the nested form: {tid: {spans: {name:
// node}}}, where siblings that share a name become a list. A span whose
// parent is missing is shown as a root rather than dropped.
func Trees(ps []Parsed) map[string]map[string]any {
	byTrace := map[string][]Parsed{}
	for _, p := range ps {
		byTrace[p.TraceID] = append(byTrace[p.TraceID], p)
	}
	out := map[string]map[string]any{}
	for tid, spans := range byTrace {
		out[tid] = map[string]any{"spans": tree(spans)}
	}
	return out
}

func tree(spans []Parsed) map[string]any {
	present := map[string]bool{}
	for _, s := range spans {
		present[s.SpanID] = true
	}
	children := map[string][]Parsed{}
	var roots []Parsed
	for _, s := range spans {
		if s.ParentID != "" && present[s.ParentID] && s.ParentID != s.SpanID {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	seen := map[string]bool{}
	var build func(list []Parsed) map[string]any
	build = func(list []Parsed) map[string]any {
		nodes := map[string]any{}
		for _, s := range list {
			if seen[s.SpanID] {
				continue
			}
			seen[s.SpanID] = true
			n := SpanJSON(s)
			if kids := children[s.SpanID]; len(kids) > 0 {
				n["spans"] = build(kids)
			}
			switch prev := nodes[s.SpanName].(type) {
			case nil:
				nodes[s.SpanName] = n
			case []any:
				nodes[s.SpanName] = append(prev, n)
			default:
				nodes[s.SpanName] = []any{prev, n}
			}
		}
		return nodes
	}
	return build(roots)
}
