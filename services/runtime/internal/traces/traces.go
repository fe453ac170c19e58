// Package traces turns the spans of what the runtime ran into canonical
// spans, with the same normaliser, limits and encoder as trace ingest
// (pkg/spanmodel, pkg/chspans), and hands each invocation's spans as one
// SpanBatch to a Sink (tracingclient: tracing's internal route, which puts
// it on the SPANS stream), where the writer stores them like any ingested
// trace.
package traces

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// Sink stores one encoded span batch (pkg/spanstream) of sc's project
// durably before it returns.
type Sink interface {
	Send(ctx context.Context, sc scope.Scope, batch []byte) error
}

// Recorder implements invoke.Recorder.
type Recorder struct {
	Sink Sink
	Norm *spanmodel.Normalizer
	Now  func() time.Time
}

// Record normalises spans and sends them as one batch; it returns once
// JetStream stored it (tracing answers only then). A span the normaliser rejects is an error (the
// runtime builds its spans itself, so that is a bug), and nothing of the
// invocation is published then.
func (r *Recorder) Record(ctx context.Context, sc scope.Scope, spans []invoke.Span) error {
	raws := make([]spanmodel.Raw, len(spans))
	for i, s := range spans {
		raws[i] = raw(s)
	}
	canon, rejected := r.Norm.Batch(raws)
	if len(rejected) > 0 {
		return errs.Wrap(errs.Internal, "runtime.span_rejected", rejected[0])
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	batch := &spanspb.SpanBatch{ProjectId: sc.ProjectID.String(), ReceivedUnixNano: now.UnixNano()}
	user := ""
	if sc.UserID != [16]byte{} {
		user = sc.UserID.String()
		batch.UserId = user
	}
	for _, s := range canon {
		p, _, err := chspans.Encode(s, r.Norm.LimitsInForce(), now, user)
		if err != nil {
			return errs.Wrap(errs.Internal, "runtime.span_encode", err)
		}
		batch.Spans = append(batch.Spans, p)
	}
	data, err := spanstream.EncodeBatch(batch)
	if err != nil {
		return errs.Wrap(errs.Internal, "runtime.span_encode", err)
	}
	if err := r.Sink.Send(ctx, sc, data); err != nil {
		return fmt.Errorf("store invocation spans: %w", err)
	}
	return nil
}

// raw is s in the native form the normaliser reads.
func raw(s invoke.Span) spanmodel.Raw {
	ag := map[string]any{"type": map[string]any{"span": s.Type}}
	for k, v := range s.Ag {
		ag[k] = v
	}
	if len(s.References) > 0 {
		refs := map[string]any{}
		for k, ref := range s.References {
			m := map[string]any{}
			if ref.ID != "" {
				m["id"] = ref.ID
			}
			if ref.Slug != "" {
				m["slug"] = ref.Slug
			}
			if ref.Version != "" {
				m["version"] = ref.Version
			}
			refs[k] = m
		}
		ag["references"] = refs
	}
	r := spanmodel.Raw{TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentID, Name: s.Name,
		Kind: "SPAN_KIND_SERVER", Start: s.Start, End: s.End, StatusCode: "STATUS_CODE_OK",
		Attributes: map[string]any{"ag": plain(ag)}}
	if s.ParentID != "" {
		r.Kind = "SPAN_KIND_CLIENT"
	}
	if s.Err != nil {
		e := errs.From(s.Err)
		r.StatusCode, r.StatusMessage = "STATUS_CODE_ERROR", e.Msg
		r.Events = []spanmodel.RawEvent{{Name: "exception", Time: s.End, Attributes: map[string]any{
			"exception.type": e.Code, "exception.message": e.Msg}}}
	}
	for name, l := range s.Links {
		r.Links = append(r.Links, spanmodel.RawLink{TraceID: l.TraceID, SpanID: l.SpanID, Attributes: map[string]any{"key": name}})
	}
	r.LinksSet = len(r.Links) > 0
	return r
}

// plain is v as JSON values only (maps, lists, strings, float64, bools):
// handlers put Go structs (messages, model settings) in the ag subtree,
// and the normaliser reads JSON values. What is already JSON (most of it:
// inputs, parameters and outputs come decoded from the request) is kept
// as it is; only the subtrees that are not take a trip through
// encoding/json.
func plain(v map[string]any) map[string]any {
	out, _ := jsonValue(v).(map[string]any)
	return out
}

func jsonValue(v any) any {
	if isJSON(v) {
		return v
	}
	if m, ok := v.(map[string]any); ok {
		c := make(map[string]any, len(m))
		for k, e := range m {
			c[k] = jsonValue(e)
		}
		return c
	}
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"unsupported": err.Error()}
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func isJSON(v any) bool {
	switch x := v.(type) {
	case nil, string, float64, bool:
		return true
	case map[string]any:
		for _, e := range x {
			if !isJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !isJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}
