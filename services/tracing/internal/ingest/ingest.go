// Package ingest accepts spans (OTLP or native), normalises them and
// publishes each request as one SpanBatch to JetStream. A request is
// answered only after JetStream stored it: accepted spans are never lost.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/model"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/normalize"
)

// Publisher stores a message durably before it returns; errors carry an
// errs.Kind (TooManyRequests when the backlog is full, Unavailable when
// JetStream does not answer in time).
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte, msgID string) error
}

// Service is the ingest use case.
type Service struct {
	pub  Publisher
	norm *normalize.Normalizer
	now  func() time.Time
}

// NewService returns an ingest service.
func NewService(pub Publisher, norm *normalize.Normalizer) *Service {
	return &Service{pub: pub, norm: norm, now: time.Now}
}

// Link names an accepted span.
type Link struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// Result is what one request stored.
type Result struct {
	Links    []Link
	Rejected []normalize.Error
}

// Ingest normalises raws and publishes the accepted spans as one message.
// key identifies the request body: a client retry of the same body within
// the stream's dedup window is stored once.
func (s *Service) Ingest(ctx context.Context, sc scope.Scope, raws []normalize.Raw, key []byte) (Result, error) {
	spans, rejected := s.norm.Batch(raws)
	res := Result{Rejected: rejected, Links: make([]Link, 0, len(spans))}
	if len(spans) == 0 {
		return res, nil
	}
	now := s.now()
	batch := &spanspb.SpanBatch{
		ProjectId:        sc.ProjectID.String(),
		ReceivedUnixNano: now.UnixNano(),
		Spans:            make([]*spanspb.Span, 0, len(spans)),
	}
	user := ""
	if sc.UserID != [16]byte{} {
		user = sc.UserID.String()
		batch.UserId = user
	}
	for _, sp := range spans {
		batch.Spans = append(batch.Spans, sp.Proto(now, user))
		res.Links = append(res.Links, Link{TraceID: sp.TraceID, SpanID: sp.SpanID})
	}
	if err := s.publish(ctx, batch, key); err != nil {
		return Result{}, err
	}
	return res, nil
}

// PublishBatch publishes spans that are already canonical (tombstones).
func (s *Service) PublishBatch(ctx context.Context, batch *spanspb.SpanBatch, key []byte) error {
	batch.ReceivedUnixNano = s.now().UnixNano()
	return s.publish(ctx, batch, key)
}

func (s *Service) publish(ctx context.Context, batch *spanspb.SpanBatch, key []byte) error {
	data, err := model.EncodeBatch(batch)
	if err != nil {
		return errs.Wrap(errs.Internal, "tracing.encode_batch", err)
	}
	msgID := ""
	if key != nil {
		h := sha256.New()
		h.Write([]byte(batch.ProjectId))
		h.Write(key)
		msgID = hex.EncodeToString(h.Sum(nil))
	}
	return s.pub.Publish(ctx, model.SpanSubject(batch.ProjectId), data, msgID)
}

// SpanKey names a stored span for deletion; Start keeps the tombstone in
// the span's partition.
type SpanKey struct {
	TraceID, SpanID string
	StartUnixMicro  int64
}

// Delete publishes tombstones for spans: once written they replace the
// spans (same identity, newer version), so the delete survives any redelivery
// of the original ingest.
func (s *Service) Delete(ctx context.Context, sc scope.Scope, spans []SpanKey) error {
	if len(spans) == 0 {
		return nil
	}
	batch := &spanspb.SpanBatch{ProjectId: sc.ProjectID.String()}
	for _, k := range spans {
		batch.Spans = append(batch.Spans, &spanspb.Span{TraceId: k.TraceID, SpanId: k.SpanID, StartUnixMicro: k.StartUnixMicro, Deleted: true})
	}
	return s.PublishBatch(ctx, batch, nil)
}
