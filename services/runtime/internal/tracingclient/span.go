package tracingclient

import "encoding/json"

// Span is a stored span as the tracing API returns it.
type Span struct {
	TraceID    string          `json:"trace_id"`
	SpanID     string          `json:"span_id"`
	ParentID   string          `json:"parent_id,omitempty"`
	StartTime  string          `json:"start_time,omitempty"`
	Attributes map[string]any  `json:"attributes,omitempty"`
	References json.RawMessage `json:"references,omitempty"`
	Links      json.RawMessage `json:"links,omitempty"`
}

// Ag reads attributes.ag.<path…> (nil when absent).
func (s *Span) Ag(path ...string) any {
	var v any = s.Attributes["ag"]
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
