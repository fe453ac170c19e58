// Package evalqueue is the evaluation worker's JetStream adapter: the
// durable pull consumer every runtime replica shares on the EVALS work
// queue (pkg/evaljob), as an evalrun.Queue. The use case (which job runs
// when, what a failure means) is evalrun's; this package only creates the
// consumer, fetches, and settles a delivery as evalrun says.
package evalqueue

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/runtime/internal/evalrun"
)

// ConsumerName is the durable pull consumer every runtime replica shares
// on the EVALS work queue: a job goes to one replica at a time.
const ConsumerName = "runtime-evals"

// Queue is the EVALS consumer; it implements evalrun.Queue.
type Queue struct{ cons jetstream.Consumer }

// Open creates (or updates) the shared consumer: explicit acks, a
// delivery unacknowledged for ackWait goes to another worker, and a job
// is delivered at most maxDeliver times (0: without bound). Every replica
// opens it with the same settings.
func Open(ctx context.Context, js jetstream.JetStream, ackWait time.Duration, maxDeliver int) (*Queue, error) {
	cons, err := js.CreateOrUpdateConsumer(ctx, evaluation.Stream, jetstream.ConsumerConfig{
		Durable:    ConsumerName,
		AckPolicy:  jetstream.AckExplicitPolicy,
		AckWait:    ackWait,
		MaxDeliver: maxDeliver,
	})
	if err != nil {
		return nil, fmt.Errorf("create %s consumer: %w", ConsumerName, err)
	}
	return &Queue{cons: cons}, nil
}

// Fetch implements evalrun.Queue: one pull request for up to n messages,
// open on the server for at most wait.
func (q *Queue) Fetch(n int, wait time.Duration) (iter.Seq[evalrun.Msg], error) {
	batch, err := q.cons.Fetch(n, jetstream.FetchMaxWait(wait))
	if err != nil {
		return nil, err
	}
	// evalrun reads every message of a batch; one left unread would come
	// back to the stream after the ack wait.
	return func(yield func(evalrun.Msg) bool) {
		for m := range batch.Messages() {
			if !yield(msg{m}) {
				return
			}
		}
	}, nil
}

// msg is a JetStream delivery as an evalrun.Msg.
type msg struct{ jetstream.Msg }

// Delivered is the delivery count from the message's metadata (0 when it
// has none).
func (m msg) Delivered() int {
	meta, err := m.Metadata()
	if err != nil || meta == nil {
		return 0
	}
	return int(meta.NumDelivered)
}
