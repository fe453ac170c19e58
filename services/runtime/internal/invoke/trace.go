package invoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// SpanID is the span id of a deterministic invocation (Call.TraceID): the
// first 8 bytes of SHA-256(trace id|ordinal), the root being ordinal 0 and
// the model calls 1, 2, … in the order they ran.
func SpanID(traceID string, ordinal int) string {
	h := sha256.Sum256([]byte(traceID + "|" + strconv.Itoa(ordinal)))
	return hex.EncodeToString(h[:8])
}

// record stores the trace of what ran: a root workflow span carrying the
// inputs, parameters, outputs and the references of the revision (an
// invocation), or, when the call links to an evaluated span, an
// annotation; model calls are its children.
func (r *run) record(ctx context.Context, start, end time.Time, session string, outputs any, err error) error {
	data := map[string]any{"inputs": r.inputs}
	if r.params != nil {
		data["parameters"] = r.params
	}
	if err == nil {
		data["outputs"] = outputs
	}
	ag := map[string]any{"data": data, "session": map[string]any{"id": session},
		"meta": map[string]any{"uri": r.handler.URI(r.s.provider())}}
	root := Span{TraceID: r.traceID, SpanID: r.rootID, ParentID: r.call.Parent.SpanID, Name: r.handler.Key,
		Type: "workflow", Start: start, End: end, Err: err, Ag: ag, References: r.references(), Links: r.call.Req.Links}
	spans := []Span{root}
	for i, c := range r.children {
		c.TraceID, c.SpanID, c.ParentID = r.traceID, randomHex(8), r.rootID
		if r.call.TraceID != "" {
			c.SpanID = SpanID(r.traceID, i+1)
		}
		spans = append(spans, c)
	}
	// The answer is already decided; a client that went away still gets
	// its trace stored.
	return r.s.Recorder.Record(context.WithoutCancel(ctx), r.call.Scope, spans)
}

// references are the call's own references (testcase, testset, ...) with
// those the registry resolved (ids of the artifact, variant, revision and
// environment) over them.
func (r *run) references() map[string]EntityRef {
	out := map[string]EntityRef{}
	for k, v := range r.call.Req.References {
		out[k] = v
	}
	if r.rev != nil {
		for k, v := range r.rev.References {
			out[k] = v
		}
	}
	return out
}

func (s *Service) provider() string {
	if s.Provider == "" {
		return "svc"
	}
	return s.Provider
}
