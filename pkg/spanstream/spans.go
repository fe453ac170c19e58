// Package spanstream is the contract of the span stream: the JetStream stream
// that carries span batches from their producers (tracing's ingest, the
// runtime's own spans) to the writer. It holds the stream and subject names,
// the stream configuration both sides declare, and the SpanBatch codec.
package spanstream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Span stream names and subjects. Tracing publishes one SpanBatch per ingest
// request on SpanSubject(project); the writer consumes them with the durable
// consumer WriterConsumer and parks a batch it can never write on
// DeadLetterSubject(project).
const (
	SpanStream       = "SPANS"
	DeadLetterStream = "SPANS_DEAD"
	WriterConsumer   = "writer"
)

// SpanSubject is the subject of a project's span batches.
func SpanSubject(project string) string { return "spans." + project }

// DeadLetterSubject is where the writer parks a project's unwritable batch.
func DeadLetterSubject(project string) string { return "spans_dead." + project }

// Lag is the age of the span stream's oldest batch: with work-queue
// retention, the oldest one the writer has not yet stored and
// acknowledged. 0 when the stream is empty.
func Lag(ctx context.Context, js jetstream.JetStream) (time.Duration, error) {
	s, err := js.Stream(ctx, SpanStream)
	if err != nil {
		return 0, err
	}
	st := s.CachedInfo().State
	if st.Msgs == 0 {
		return 0, nil
	}
	return max(time.Since(st.FirstTime), 0), nil
}

// StreamConfig is the span stream both tracing and the writer declare.
//
// Work-queue retention removes a batch once the writer acked it, so MaxBytes
// bounds the backlog only; with limits retention and DiscardNew, batches
// already in ClickHouse would count against the limit and ingest would be
// refused forever once it is reached. DiscardNew makes a full backlog a
// publish error (ingest answers 429) instead of silently dropping the oldest
// unwritten batch.
func StreamConfig(maxBytes int64, dedupWindow time.Duration) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       SpanStream,
		Subjects:   []string{"spans.>"},
		Retention:  jetstream.WorkQueuePolicy,
		Discard:    jetstream.DiscardNew,
		MaxBytes:   maxBytes,
		Storage:    jetstream.FileStorage,
		Duplicates: dedupWindow,
		MaxMsgSize: MaxMessageBytes,
	}
}

// DeadLetterStreamConfig keeps unwritable batches for an operator.
func DeadLetterStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:      DeadLetterStream,
		Subjects:  []string{"spans_dead.>"},
		Retention: jetstream.LimitsPolicy,
		MaxAge:    14 * 24 * time.Hour,
		Storage:   jetstream.FileStorage,
	}
}

// StreamSettings is the part of the stream configuration operators tune.
// Variables: <PREFIX>_STREAM_*; tracing and the writer must agree.
type StreamSettings struct {
	MaxBytes    int64         `split_words:"true" default:"4294967296" desc:"largest unwritten span backlog in JetStream, in bytes; beyond it ingest answers 429"`
	DedupWindow time.Duration `split_words:"true" default:"2m" desc:"how long a retried ingest request (same body) is recognised and stored once"`
	Replicas    int           `default:"1" desc:"copies of the span streams (SPANS, SPANS_DEAD) on a NATS cluster: 3 survives the loss of one server; 1 on a single server"`
}

// Config is the span stream as these settings declare it. Every declarer
// (tracing, the runtime, the writer) must pass the same settings: each
// start updates the stream to its own view.
func (s StreamSettings) Config() jetstream.StreamConfig {
	c := StreamConfig(s.MaxBytes, s.DedupWindow)
	c.Replicas = max(s.Replicas, 1)
	return c
}

// DeadLetterConfig is the dead-letter stream with the same replica count.
func (s StreamSettings) DeadLetterConfig() jetstream.StreamConfig {
	c := DeadLetterStreamConfig()
	c.Replicas = max(s.Replicas, 1)
	return c
}
