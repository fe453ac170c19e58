// Package writer moves span batches from the JetStream stream into ClickHouse:
// a durable pull consumer, inserts of 20–50k rows or one second's worth, and
// acks only after ClickHouse accepted the insert (at-least-once; the table's
// version column makes a redelivery invisible).
package writer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanstream"
)

// Config tunes batching and retries. Variables: WRITER_*.
type Config struct {
	BatchRows     int           `split_words:"true" default:"20000" desc:"rows that make an insert; a smaller batch is flushed after WRITER_FLUSH_INTERVAL"`
	BatchBytes    int           `split_words:"true" default:"67108864" desc:"decoded bytes of span batches that make an insert even below WRITER_BATCH_ROWS: spans may be up to TRACING_SPAN_MAX_BYTES each, so rows alone do not bound the writer's memory (it holds up to about 4 times this per inserter, see docs/operations.md)"`
	FetchMessages int           `split_words:"true" default:"64" desc:"most span batches (JetStream messages, one per ingest request) fetched ahead of the inserts: during a backlog of large batches the writer holds this many at once, as stored (compressed)"`
	FlushInterval time.Duration `split_words:"true" default:"1s" desc:"longest a fetched span waits before it is inserted"`
	Inserters     int           `default:"2" desc:"inserts in flight at once"`
	AckWait       time.Duration `split_words:"true" default:"30s" desc:"how long JetStream waits for an ack before redelivering a batch (e.g. after a crash)"`
	RetryDelay    time.Duration `split_words:"true" default:"2s" desc:"redelivery delay of a batch whose insert failed"`
	MaxAttempts   int           `split_words:"true" default:"5" desc:"inserts of one batch, alone and with ClickHouse healthy, before it goes to the dead-letter stream"`
}

// Sink stores span batches; chstore implements it on ClickHouse.
type Sink interface {
	// Insert writes every span of batches in one insert, or none. It
	// keeps no reference to batches once their rows are copied for the
	// insert (chspans.Insert), so that the writer's memory is freed early.
	Insert(ctx context.Context, batches []*spanspb.SpanBatch) (int, error)
	// Healthy tells a down server from a batch the server rejects.
	Healthy(ctx context.Context) error
}

// Publisher parks a batch on the dead-letter stream.
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte, msgID string) (*jetstream.PubAck, error)
}

// Writer is the consume → insert → ack loop.
type Writer struct {
	cfg  Config
	js   jetstream.JetStream
	sink Sink
	dead Publisher
	log  *slog.Logger
	m    metrics
}

type metrics struct {
	spans      prometheus.Counter
	inserts    prometheus.Counter
	failures   prometheus.Counter
	deadLetter prometheus.Counter
	insertTime prometheus.Histogram
	lag        prometheus.Histogram
}

// New returns a writer; its metrics are registered on reg.
func New(cfg Config, js jetstream.JetStream, sink Sink, dead Publisher, reg prometheus.Registerer, log *slog.Logger) *Writer {
	w := &Writer{cfg: cfg, js: js, sink: sink, dead: dead, log: log, m: metrics{
		spans:      prometheus.NewCounter(prometheus.CounterOpts{Name: "writer_spans_written_total", Help: "Spans inserted into ClickHouse."}),
		inserts:    prometheus.NewCounter(prometheus.CounterOpts{Name: "writer_inserts_total", Help: "ClickHouse inserts that succeeded."}),
		failures:   prometheus.NewCounter(prometheus.CounterOpts{Name: "writer_insert_failures_total", Help: "ClickHouse inserts that failed (the batches are redelivered)."}),
		deadLetter: prometheus.NewCounter(prometheus.CounterOpts{Name: "writer_dead_letter_total", Help: "Span batches moved to the dead-letter stream because they can never be written."}),
		insertTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "writer_insert_seconds", Help: "Duration of one ClickHouse insert.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}),
		lag:        prometheus.NewHistogram(prometheus.HistogramOpts{Name: "writer_freshness_seconds", Help: "Time from ingest acceptance to the ClickHouse insert of a batch.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
	}}
	if w.cfg.Inserters < 1 {
		w.cfg.Inserters = 1
	}
	reg.MustRegister(w.m.spans, w.m.inserts, w.m.failures, w.m.deadLetter, w.m.insertTime, w.m.lag)
	return w
}

// busyPoll is how often an overdue batch is offered again to inserters
// that were all busy.
const busyPoll = 5 * time.Millisecond

// item is a fetched message and its decoded batch. The inserter that
// writes it lets go of the batch (its decompressed buffer) as soon as the
// rows are in the insert's column buffers, before the insert is sent, and
// decodes the message again in the rare case it must retry it alone.
type item struct {
	msg      jetstream.Msg
	batch    *spanspb.SpanBatch
	project  string
	received int64
}

// Run consumes until ctx is done, then inserts what it holds and returns.
func (w *Writer) Run(ctx context.Context) error {
	cons, err := w.js.CreateOrUpdateConsumer(ctx, spanstream.SpanStream, jetstream.ConsumerConfig{
		Durable:       spanstream.WriterConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.cfg.AckWait,
		MaxDeliver:    -1, // a batch is never dropped by JetStream; dead-lettering is ours
		MaxAckPending: 4096,
	})
	if err != nil {
		return fmt.Errorf("create writer consumer: %w", err)
	}
	// What is fetched ahead is held in the client's buffer: 512 messages
	// (the previous count) of 1 MB batches held 512 MB during a backlog. A
	// byte bound (PullMaxBytes) stalled the consumer for minutes in a load
	// run (nats.go v1.55), so the bound is a count of messages, each at
	// most NATS' max_payload.
	it, err := cons.Messages(jetstream.PullMaxMessages(max(w.cfg.FetchMessages, 2)), jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return fmt.Errorf("consume %s: %w", spanstream.SpanStream, err)
	}
	msgs := w.receive(ctx, it)
	work := make(chan []item)
	var wg sync.WaitGroup
	for range w.cfg.Inserters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for items := range work {
				w.write(ctx, items)
			}
		}()
	}
	defer func() {
		close(work)
		wg.Wait()
	}()

	// A batch whose flush interval has passed goes to the first free
	// inserter; while none is free, it keeps growing up to the rows and
	// bytes of a full insert. Under load, when ClickHouse is what the
	// pipeline waits for, inserts are then large, and ClickHouse spends far
	// less CPU per row on large inserts (fewer parts to merge: 34-41 µs per
	// row at 5,000 rows per insert, 11-12 at 50,000, scripts/bench/chcpu.sh);
	// the rows wait no longer than they would have for the busy inserters.
	var pending []item
	rows, size := 0, 0
	var first time.Time
	flush := func(block bool) bool {
		if len(pending) > 0 {
			if block {
				work <- pending
			} else {
				select {
				case work <- pending:
				default:
					return false
				}
			}
		}
		pending, rows, size = nil, 0, 0
		return true
	}
	timer := time.NewTimer(w.cfg.FlushInterval)
	defer timer.Stop()
	for {
		wait := w.cfg.FlushInterval
		if len(pending) > 0 {
			wait = time.Until(first.Add(w.cfg.FlushInterval))
		}
		if wait <= 0 {
			if flush(false) {
				continue
			}
			wait = busyPoll // overdue, every inserter busy: fetch more meanwhile
		}
		timer.Reset(wait)
		var msg jetstream.Msg
		select {
		case m, ok := <-msgs:
			if !ok || ctx.Err() != nil {
				flush(true)
				return nil
			}
			msg = m
		case <-timer.C:
			continue // the next turn flushes what is overdue
		}
		b, n, err := spanstream.DecodeBatchSize(msg.Data())
		if err != nil {
			w.deadLetterMsg(ctx, msg, "", err)
			continue
		}
		if len(pending) == 0 {
			first = time.Now()
		}
		pending = append(pending, item{msg: msg, batch: b, project: b.GetProjectId(), received: b.GetReceivedUnixNano()})
		rows += len(b.Spans)
		size += n
		if rows >= w.cfg.BatchRows || w.cfg.BatchBytes > 0 && size >= w.cfg.BatchBytes {
			flush(true) // full: held bytes stay bounded, wait for an inserter
		}
	}
}

// pullHeartbeat is how often the consumer's leader confirms a waiting pull
// request. Two missed in a row mean the request is gone (its leader died,
// and the connection, to another node, never dropped): the iterator then
// pulls again, so a batch waits at most about 10 s plus an election.
const pullHeartbeat = 5 * time.Second

// receive hands the iterator's messages over a channel until ctx is done
// or the iterator stops, then closes it. Next waits without a time limit:
// the iterator checks heartbeats only inside Next, and a fresh check in each
// short wait (the flush interval) never fired, so the writer stalled for
// good with its pull request lost (TestNATSClusterNodeKilledMidIngest).
func (w *Writer) receive(ctx context.Context, it jetstream.MessagesContext) <-chan jetstream.Msg {
	msgs := make(chan jetstream.Msg)
	go func() { <-ctx.Done(); it.Stop() }()
	go func() {
		defer close(msgs)
		for {
			msg, err := it.Next()
			switch {
			case errors.Is(err, jetstream.ErrMsgIteratorClosed):
				return
			case errors.Is(err, jetstream.ErrNoHeartbeat):
				w.log.Warn("span stream: pull request lost, pulling again", "err", err)
				continue
			case err != nil:
				w.log.Warn("fetch span batch", "err", err)
				continue
			}
			select {
			case msgs <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()
	return msgs
}

// write inserts items, then acks them; on failure it finds out whether
// ClickHouse is down (everything is retried later) or rejects a batch (that
// one alone is retried, and dead-lettered after MaxAttempts).
func (w *Writer) write(ctx context.Context, items []item) {
	// A fresh context lets the last insert finish during shutdown.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.AckWait)
	defer cancel()
	err := w.insert(ictx, items)
	if err == nil {
		w.ack(items)
		return
	}
	w.m.failures.Inc()
	if herr := w.sink.Healthy(ictx); herr != nil {
		w.log.Warn("clickhouse unavailable, batches will be redelivered", "err", err, "batches", len(items))
		w.nak(items)
		return
	}
	if len(items) == 1 {
		w.retryOrDeadLetter(ctx, items[0], err)
		return
	}
	// ClickHouse is up but refused the insert: isolate the batch at fault so
	// it does not hold back its neighbours.
	for _, it := range items {
		single := []item{it}
		if err := w.insert(ictx, single); err != nil {
			w.m.failures.Inc()
			w.retryOrDeadLetter(ctx, it, err)
			continue
		}
		w.ack(single)
	}
}

// insert writes the batches of items in one insert. The items let go of
// their batches first: the sink holds them only until their rows are
// copied into the driver's column buffers, and the decompressed buffers
// (about as large as those) are then free during the send, which takes the
// longest. A batch let go of is decoded again from its message if needed.
func (w *Writer) insert(ctx context.Context, items []item) error {
	batches := make([]*spanspb.SpanBatch, len(items))
	for i := range items {
		b := items[i].batch
		if b == nil {
			var err error
			if b, err = spanstream.DecodeBatch(items[i].msg.Data()); err != nil {
				return err // decoded once already: cannot happen
			}
		}
		batches[i], items[i].batch = b, nil
	}
	start := time.Now()
	n, err := w.sink.Insert(ctx, batches)
	if err != nil {
		return err
	}
	w.m.insertTime.Observe(time.Since(start).Seconds())
	w.m.inserts.Inc()
	w.m.spans.Add(float64(n))
	now := time.Now()
	for _, it := range items {
		w.m.lag.Observe(now.Sub(time.Unix(0, it.received)).Seconds())
	}
	return nil
}

func (w *Writer) ack(items []item) {
	for _, it := range items {
		// A lost ack means a redelivery, which the version column absorbs.
		if err := it.msg.Ack(); err != nil {
			w.log.Warn("ack span batch", "err", err)
		}
	}
}

func (w *Writer) nak(items []item) {
	for _, it := range items {
		if err := it.msg.NakWithDelay(w.cfg.RetryDelay); err != nil {
			w.log.Warn("nak span batch", "err", err)
		}
	}
}

func (w *Writer) retryOrDeadLetter(ctx context.Context, it item, err error) {
	md, mderr := it.msg.Metadata()
	if mderr == nil && int(md.NumDelivered) < w.cfg.MaxAttempts {
		w.log.Warn("span batch rejected, will retry", "err", err, "attempt", md.NumDelivered)
		w.nak([]item{it})
		return
	}
	w.deadLetterMsg(ctx, it.msg, it.project, err)
}

// deadLetterMsg parks msg for an operator and removes it from the stream.
// If even the dead-letter publish fails, the batch stays and is redelivered.
func (w *Writer) deadLetterMsg(ctx context.Context, msg jetstream.Msg, project string, cause error) {
	if project == "" {
		project = "unknown"
	}
	md, _ := msg.Metadata()
	msgID := ""
	if md != nil {
		msgID = fmt.Sprintf("dead-%d", md.Sequence.Stream)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := w.dead.Publish(pctx, spanstream.DeadLetterSubject(project), msg.Data(), msgID); err != nil {
		w.log.Error("dead-letter span batch", "err", err, "cause", cause)
		_ = msg.NakWithDelay(w.cfg.RetryDelay)
		return
	}
	w.m.deadLetter.Inc()
	w.log.Error("span batch dead-lettered", "err", cause, "project_id", project)
	if err := msg.Term(); err != nil {
		w.log.Warn("term span batch", "err", err)
	}
}
