// Package traces turns the spans of what the runtime ran into canonical
// spans, with the same normaliser, limits and encoder as trace ingest
// (pkg/spanmodel, pkg/chspans), and publishes each invocation's spans as one
// SpanBatch straight to the SPANS stream, where the writer stores them like any
// ingested trace.
package traces

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// Publisher stores a message durably before it returns.
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte, msgID string) error
}

// NATSPublisher publishes to JetStream and waits for the PubAck.
type NATSPublisher struct{ P *natsx.Publisher }

// Publish stores data on subject.
func (n NATSPublisher) Publish(ctx context.Context, subject string, data []byte, msgID string) error {
	_, err := n.P.Publish(ctx, subject, data, msgID)
	return err
}

// Recorder implements invoke.Recorder.
type Recorder struct {
	Pub  Publisher
	Norm *spanmodel.Normalizer
	Now  func() time.Time
}

// Record normalises spans and publishes them as one batch; it returns once
// JetStream stored it. A span the normaliser rejects is an error (the
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
	if err := r.Pub.Publish(ctx, spanstream.SpanSubject(batch.ProjectId), data, ""); err != nil {
		return fmt.Errorf("publish invocation spans: %w", err)
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
