// Package tracewrite holds the use cases that write a whole trace rather
// than a batch of spans: creating or replacing one trace (exactly one trace,
// exactly one root, every span stored or none) and deleting one (a
// tombstone for every live span). It composes the ingest service (which
// publishes), the query service (which finds a trace's spans) and the
// dedup epochs (which keep a re-send after a delete from passing for a
// retry); transports bind requests and render its results.
package tracewrite

import (
	"context"
	"fmt"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// Ingester publishes spans to the span stream; ingest.Service implements it.
type Ingester interface {
	// IngestAll normalises and publishes raws as one message, or none of
	// them when one is rejected (Result.Rejected says which and why).
	IngestAll(ctx context.Context, sc scope.Scope, raws []spanmodel.Raw, key []byte) (ingest.Result, error)
	// Delete publishes tombstones for the spans named.
	Delete(ctx context.Context, sc scope.Scope, spans []ingest.SpanKey) error
}

// SpanFinder reads the live spans of traces; query.Service implements it.
type SpanFinder interface {
	Spans(ctx context.Context, project string, traceIDs, spanIDs []string) ([]query.Parsed, error)
}

// Epochs bumps a project's delete epoch, which is part of every later
// ingest's message id (package dedup); dedup.Epochs implements it.
type Epochs interface {
	Bump(ctx context.Context, project string) error
}

// Service is the whole-trace write use cases.
type Service struct {
	ingest Ingester
	spans  SpanFinder
	epochs Epochs // nil: no epoch bump
}

// NewService returns the service; epochs may be nil (no dedup across
// deletes).
func NewService(in Ingester, spans SpanFinder, epochs Epochs) *Service {
	return &Service{ingest: in, spans: spans, epochs: epochs}
}

// Upsert stores raws as one trace (create, or edit when pathID names the
// trace): they must be one trace with exactly one root span and, given,
// pathID's trace; one span rejected by the normaliser or the limits refuses
// the whole request (413 for a limit, 400 otherwise), since the root rule
// needs every span. It answers the trace id and what was stored; key
// identifies the request for the stream's duplicate detection.
func (s *Service) Upsert(ctx context.Context, sc scope.Scope, raws []spanmodel.Raw, pathID string, key []byte) (ingest.Result, string, error) {
	id, err := oneTrace(raws, pathID)
	if err != nil {
		return ingest.Result{}, "", err
	}
	res, err := s.ingest.IngestAll(ctx, sc, raws, key)
	if err != nil {
		return ingest.Result{}, "", err
	}
	if len(res.Rejected) > 0 {
		// Creating a trace is all or nothing: the root rule needs every
		// span, and IngestAll published none.
		return ingest.Result{}, "", RejectedSpan(res.Rejected[0], "tracing.invalid_span", res.Rejected[0].Error())
	}
	return res, id, nil
}

// oneTrace checks the create/edit rule: one trace, exactly one root, and
// (when pathID is given) the trace the path names. It answers the trace id.
func oneTrace(raws []spanmodel.Raw, pathID string) (string, error) {
	if len(raws) == 0 {
		return "", errs.New(errs.Invalid, "tracing.missing_spans", "Missing spans")
	}
	ids := map[string]bool{}
	roots := 0
	for _, r := range raws {
		id, err := spanmodel.TraceID(r.TraceID)
		if err != nil {
			return "", errs.WithDetail(errs.Invalid, "tracing.invalid_trace_id", err.Error(), err.Error())
		}
		ids[id] = true
		if r.ParentID == "" {
			roots++
		}
	}
	if len(ids) > 1 {
		return "", errs.New(errs.Invalid, "tracing.too_many_traces", "Too many traces")
	}
	var id string
	for k := range ids {
		id = k
	}
	if pathID != "" {
		want, err := spanmodel.TraceID(pathID)
		if err != nil || want != id {
			return "", errs.New(errs.Invalid, "tracing.trace_id_mismatch", fmt.Sprintf("trace_id %s in the body does not match the path", id))
		}
	}
	switch {
	case roots == 0:
		return "", errs.New(errs.Invalid, "tracing.missing_root", "Missing root span")
	case roots > 1:
		return "", errs.New(errs.Invalid, "tracing.too_many_roots", "Too many root spans")
	}
	return id, nil
}

// RejectedSpan is the error of a request that stands or falls with each of
// its spans, saying msg: 413 for a span limit, 400 (code) otherwise.
func RejectedSpan(r spanmodel.Error, code, msg string) error {
	if r.Limit {
		return errs.WithDetail(errs.TooLarge, "tracing.span_limit", msg, msg)
	}
	return errs.WithDetail(errs.Invalid, code, msg, msg)
}

// Delete tombstones every live span of trace id (already parsed) and
// answers the spans it deleted, none when the trace has no live span.
//
// The delete epoch is bumped before the lookup: the same trace re-sent
// after this answer must get a new message id even if its first ingest is
// not stored yet, or the stream would drop the re-send as a retry.
func (s *Service) Delete(ctx context.Context, sc scope.Scope, id string) ([]ingest.Link, error) {
	project := sc.ProjectID.String()
	if s.epochs != nil {
		if err := s.epochs.Bump(ctx, project); err != nil {
			return nil, err
		}
	}
	spans, err := s.spans.Spans(ctx, project, []string{id}, nil)
	if err != nil {
		return nil, err
	}
	keys := make([]ingest.SpanKey, 0, len(spans))
	links := make([]ingest.Link, 0, len(spans))
	for _, sp := range spans {
		keys = append(keys, ingest.SpanKey{TraceID: sp.TraceID, SpanID: sp.SpanID, StartUnixMicro: sp.StartUS, Expires: sp.Expires})
		links = append(links, ingest.Link{TraceID: sp.TraceID, SpanID: sp.SpanID})
	}
	if err := s.ingest.Delete(ctx, sc, keys); err != nil {
		return nil, err
	}
	return links, nil
}
