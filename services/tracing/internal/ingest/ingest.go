// Package ingest accepts spans (OTLP or native), normalises them and
// publishes each request as one SpanBatch to JetStream. A request is
// answered only after JetStream stored it: accepted spans are never lost.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
)

// Publisher stores a message durably before it returns; errors carry an
// errs.Kind (TooManyRequests when the backlog is full, Unavailable when
// JetStream does not answer in time).
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte, msgID string) error
}

// RowWriter stores canonical rows in the span table at once, beside the
// stream: what a delete writes through it is visible when the delete
// answers.
type RowWriter interface {
	WriteRows(ctx context.Context, batch *spanspb.SpanBatch) error
}

// Service is the ingest use case.
type Service struct {
	// Direct, when set, also receives every delete's tombstones
	// synchronously, after the stream has stored them: the caller's next
	// read no longer sees what it deleted. The writer's later copy of the
	// same batch (same rows, same version) changes nothing.
	Direct RowWriter

	pub  Publisher
	norm *spanmodel.Normalizer
	now  func() time.Time
	// maxBatch bounds a request's encoded spans: the one message that
	// carries them must be decodable by the writer (spanstream.MaxBatchBytes).
	maxBatch int
}

// NewService returns an ingest service; norm's limits bound every span.
func NewService(pub Publisher, norm *spanmodel.Normalizer) *Service {
	return &Service{pub: pub, norm: norm, now: time.Now, maxBatch: spanstream.MaxBatchBytes}
}

// Link names an accepted span.
type Link struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// Result is what one request stored.
type Result struct {
	Links    []Link
	Rejected []spanmodel.Error
}

// Ingest normalises raws and publishes the accepted spans as one message.
// key identifies the request body: a client retry of the same body within
// the stream's dedup window is stored once.
//
// Every route's spans come through here, and so do the span limits
// (spanmodel.Limits): a span over them is trimmed with the cut recorded, or
// rejected alone, before the answer; a request whose spans together exceed
// what one message carries is refused whole (413), as one message per
// request is the rule. What is published is therefore always writable.
func (s *Service) Ingest(ctx context.Context, sc scope.Scope, raws []spanmodel.Raw, key []byte) (Result, error) {
	return s.ingest(ctx, sc, raws, key, false)
}

// IngestAll is Ingest for a request that stands or falls with each of its
// spans (creating a trace): when one is rejected, none is published.
func (s *Service) IngestAll(ctx context.Context, sc scope.Scope, raws []spanmodel.Raw, key []byte) (Result, error) {
	return s.ingest(ctx, sc, raws, key, true)
}

// minSplit is the fewest spans one goroutine of a request encodes.
const minSplit = 32

func (s *Service) ingest(ctx context.Context, sc scope.Scope, raws []spanmodel.Raw, key []byte, all bool) (Result, error) {
	// The spans' attribute trees are read by Encode only (the batch holds
	// their encoded strings): their maps go back to the arena when this
	// request returns.
	arena := spanmodel.NewArena()
	defer arena.Release()
	spans, rejected := s.norm.BatchIn(raws, arena)
	res := Result{Links: make([]Link, 0, len(spans))}
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
	// Encoded side by side (as they were normalised), then taken in order;
	// the few spans whose attributes must be trimmed first are encoded
	// then, one at a time (spans may share an OTLP resource's values).
	type encoded struct {
		p   *spanspb.Span
		n   int
		err error
	}
	enc := make([]encoded, len(spans))
	lim := s.norm.LimitsInForce()
	spanmodel.Split(len(spans), minSplit, func(_, from, to int) {
		for i := from; i < to; i++ {
			enc[i].p, enc[i].n, enc[i].err = chspans.EncodeShared(spans[i], lim, now, user)
		}
	})
	size := 0
	encodeRejected := false
	for i, sp := range spans {
		p, n, err := enc[i].p, enc[i].n, enc[i].err
		if errors.Is(err, chspans.ErrMustTrim) {
			p, n, err = chspans.Encode(sp, lim, now, user)
		}
		if err != nil {
			rejected = append(rejected, spanmodel.Error{Index: sp.Index, Msg: err.Error(), Limit: spanmodel.IsLimit(err)})
			encodeRejected = true
			continue
		}
		if size += n + 8; size > s.maxBatch { // 8: the span's field tag and length
			return Result{}, errs.New(errs.TooLarge, "tracing.batch_too_large", fmt.Sprintf(
				"the spans of this request encode to more than %d bytes, the most one message carries; send fewer spans per request", s.maxBatch))
		}
		batch.Spans = append(batch.Spans, p)
		res.Links = append(res.Links, Link{TraceID: sp.TraceID, SpanID: sp.SpanID})
	}
	if encodeRejected {
		sort.SliceStable(rejected, func(i, j int) bool { return rejected[i].Index < rejected[j].Index })
	}
	res.Rejected = rejected
	if all && len(rejected) > 0 {
		res.Links = nil
		return res, nil
	}
	if len(batch.Spans) == 0 {
		return res, nil
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
	data, err := spanstream.EncodeBatch(batch)
	if errors.Is(err, spanstream.ErrBatchTooLarge) {
		return &errs.Error{Kind: errs.TooLarge, Code: "tracing.batch_too_large", Err: err,
			Msg: fmt.Sprintf("the spans of this request exceed one message (%d bytes of protobuf, %d compressed); send fewer spans per request", spanstream.MaxBatchBytes, spanstream.MaxMessageBytes)}
	}
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
	return s.pub.Publish(ctx, spanstream.SpanSubject(batch.ProjectId), data, msgID)
}

// SpanKey names a stored span for deletion. Its start time and expiry day
// (the partition key) put the tombstone in the span's partition, where
// ReplacingMergeTree merges the two; the expiry also keeps the tombstone as
// long as the span, however long after its ingest the delete comes.
type SpanKey struct {
	TraceID, SpanID string
	StartUnixMicro  int64
	Expires         time.Time
}

// Delete publishes tombstones for spans: once written they replace the
// spans (same identity, newer version), so the delete survives any redelivery
// of the original ingest. With Direct set, the same tombstones are then
// written to ClickHouse before Delete returns (read-your-writes); the stream
// stays the durable path, so a failure there is an error and nothing is
// written directly.
func (s *Service) Delete(ctx context.Context, sc scope.Scope, spans []SpanKey) error {
	if len(spans) == 0 {
		return nil
	}
	batch := &spanspb.SpanBatch{ProjectId: sc.ProjectID.String()}
	for _, k := range spans {
		batch.Spans = append(batch.Spans, &spanspb.Span{TraceId: k.TraceID, SpanId: k.SpanID, StartUnixMicro: k.StartUnixMicro,
			ExpiresUnixDay: unixDay(k.Expires), Deleted: true})
	}
	if err := s.PublishBatch(ctx, batch, nil); err != nil {
		return err
	}
	if s.Direct == nil {
		return nil
	}
	if err := s.Direct.WriteRows(ctx, batch); err != nil {
		// Stored in the stream, so the writer applies it; only its
		// immediate visibility failed. A retry of the delete is harmless.
		return &errs.Error{Kind: errs.Unavailable, Code: "tracing.delete_not_yet_visible", Err: err,
			Msg: "the delete is stored and will apply shortly, but could not be made visible at once; retry to confirm"}
	}
	return nil
}

// unixDay is the calendar day of t (a ClickHouse Date, read back at
// midnight in whatever zone the driver gives it) in days since the epoch;
// 0 for the zero time: the writer then computes the expiry itself.
func unixDay(t time.Time) int32 {
	if t.IsZero() {
		return 0
	}
	y, m, d := t.Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// Forward publishes a span batch the runtime encoded itself (its
// invocations' spans, normalised and priced with the same normaliser and
// encoder as ingest, pkg/spanmodel and pkg/chspans): only tracing may
// publish span batches (deployments/nats/auth.conf), so the runtime hands
// its batches here. data must be one stream message (spanstream) of sc's
// project and user; it is stored as it came, so the stored spans are those
// the runtime built, and once however often it is sent within the stream's
// duplicate window.
func (s *Service) Forward(ctx context.Context, sc scope.Scope, data []byte) error {
	batch, err := spanstream.DecodeBatch(data)
	if err != nil {
		return errs.WithDetail(errs.Invalid, "tracing.bad_batch", "Invalid span batch", "body: "+err.Error())
	}
	if batch.ProjectId != sc.ProjectID.String() {
		return errs.WithDetail(errs.Invalid, "tracing.batch_project", "Invalid span batch",
			fmt.Sprintf("body.project_id: %q is not the caller's project", batch.ProjectId))
	}
	user := ""
	if sc.UserID != [16]byte{} {
		user = sc.UserID.String()
	}
	if batch.UserId != user {
		return errs.WithDetail(errs.Invalid, "tracing.batch_user", "Invalid span batch",
			fmt.Sprintf("body.user_id: %q is not the caller's user", batch.UserId))
	}
	if len(batch.Spans) == 0 {
		return nil
	}
	// The runtime sends a batch again when it got no answer: the same
	// bytes (its receive time included) are stored once.
	sum := sha256.Sum256(data)
	return s.pub.Publish(ctx, spanstream.SpanSubject(batch.ProjectId), data, "runtime:"+hex.EncodeToString(sum[:]))
}
