package ingest

import (
	"context"
	"errors"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/natsx"
)

// Error codes the span stream answers with when it cannot take a batch.
const (
	jsStoreFailed     = 10077 // "maximum bytes/messages exceeded" with DiscardNew
	jsResourcesExceed = 10047
	jsMessageTooLarge = 10054
)

var (
	errFull   = errs.New(errs.TooManyRequests, "tracing.backlog_full", "the span backlog is full; retry later")
	errSlow   = errs.New(errs.Unavailable, "tracing.stream_unavailable", "the span stream did not acknowledge in time; retry later")
	errTooBig = errs.New(errs.TooLarge, "tracing.batch_too_large", "the span batch is larger than the stream accepts")
)

// NATSPublisher publishes to JetStream and classifies its failures so a
// client learns whether to slow down (429), retry (503) or split (413).
type NATSPublisher struct{ P *natsx.Publisher }

// Publish stores data and waits for the PubAck.
func (n NATSPublisher) Publish(ctx context.Context, subject string, data []byte, msgID string) error {
	_, err := n.P.Publish(ctx, subject, data, msgID)
	if err == nil {
		return nil
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case jsStoreFailed, jsResourcesExceed:
			return &errs.Error{Kind: errFull.Kind, Code: errFull.Code, Msg: errFull.Msg, Err: err}
		case jsMessageTooLarge:
			return &errs.Error{Kind: errTooBig.Kind, Code: errTooBig.Code, Msg: errTooBig.Msg, Err: err}
		}
	}
	if errors.Is(err, nats.ErrMaxPayload) {
		return &errs.Error{Kind: errTooBig.Kind, Code: errTooBig.Code, Msg: errTooBig.Msg, Err: err}
	}
	return &errs.Error{Kind: errSlow.Kind, Code: errSlow.Code, Msg: errSlow.Msg, Err: err}
}

// ClickHouseRows writes rows to the span table with the writer's own insert
// (chspans.Insert): the same columns, the same version, so the writer's
// later copy of a batch collapses with this one. Every row must carry its
// expiry (tombstones do): tracing knows no retention periods.
type ClickHouseRows struct{ Conn driver.Conn }

// WriteRows inserts batch's spans.
func (c ClickHouseRows) WriteRows(ctx context.Context, batch *spanspb.SpanBatch) error {
	_, err := chspans.Insert(ctx, c.Conn, []*spanspb.SpanBatch{batch}, nil)
	return err
}
