package natsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Backlog is what a durable consumer has yet to finish, as JetStream
// reports it at one moment.
type Backlog struct {
	// Pending is the messages not yet delivered to the consumer.
	Pending uint64
	// Unacked is the messages delivered and not yet acknowledged.
	Unacked int
	// OldestAge is how long ago the oldest message not yet acknowledged
	// was stored; 0 with nothing pending or unacked.
	OldestAge time.Duration
}

// ReadBacklog reads the backlog of the durable consumer of stream. The
// caller's NATS user needs $JS.API.CONSUMER.INFO.<stream>.<consumer>,
// $JS.API.STREAM.INFO.<stream> and $JS.API.STREAM.MSG.GET.<stream>
// (deployments/nats/auth.conf).
func ReadBacklog(ctx context.Context, js jetstream.JetStream, stream, consumer string) (Backlog, error) {
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return Backlog{}, fmt.Errorf("consumer %s of %s: %w", consumer, stream, err)
	}
	info := c.CachedInfo()
	b := Backlog{Pending: info.NumPending, Unacked: info.NumAckPending}
	if b.Pending == 0 && b.Unacked == 0 {
		return b, nil
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return b, fmt.Errorf("stream %s: %w", stream, err)
	}
	// The ack floor is the last message of an unbroken run of acks: the
	// one after it (or, if that one was removed, the next one stored) is
	// the oldest the consumer has not finished.
	msg, err := s.GetMsg(ctx, info.AckFloor.Stream+1, jetstream.WithGetMsgSubject(">"))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return b, nil
	}
	if err != nil {
		return b, fmt.Errorf("oldest message of %s: %w", stream, err)
	}
	b.OldestAge = max(time.Since(msg.Time), 0)
	return b, nil
}

// BacklogCollector exports a durable consumer's backlog, read from
// JetStream at each scrape (ReadBacklog), as three gauges:
//
//	<prefix>_pending_messages            not yet delivered
//	<prefix>_unacked_messages            delivered, not yet acknowledged
//	<prefix>_oldest_unacked_age_seconds  age of the oldest message not yet acknowledged
//
// A scrape that cannot read them (NATS down) shows none of the three, and
// logs why at debug level: /ready reports NATS already.
func BacklogCollector(js jetstream.JetStream, stream, consumer, prefix, what string, log *slog.Logger) prometheus.Collector {
	labels := prometheus.Labels{"stream": stream, "consumer": consumer}
	return &backlogCollector{js: js, stream: stream, consumer: consumer, log: log,
		pending: prometheus.NewDesc(prefix+"_pending_messages", what+" not yet delivered to the consumer.", nil, labels),
		unacked: prometheus.NewDesc(prefix+"_unacked_messages", what+" delivered to the consumer and not yet acknowledged.", nil, labels),
		age:     prometheus.NewDesc(prefix+"_oldest_unacked_age_seconds", "Age of the oldest of the "+what+" not yet acknowledged (0 when none is waiting).", nil, labels),
	}
}

type backlogCollector struct {
	js                    jetstream.JetStream
	stream, consumer      string
	log                   *slog.Logger
	pending, unacked, age *prometheus.Desc
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.unacked
	ch <- c.age
}

// backlogTimeout bounds a scrape's JetStream requests, well within a
// scraper's usual 10 s timeout.
const backlogTimeout = 3 * time.Second

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	b, err := ReadBacklog(ctx, c.js, c.stream, c.consumer)
	if err != nil {
		c.log.Debug("backlog not read", "stream", c.stream, "consumer", c.consumer, "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(b.Pending))
	ch <- prometheus.MustNewConstMetric(c.unacked, prometheus.GaugeValue, float64(b.Unacked))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, b.OldestAge.Seconds())
}
