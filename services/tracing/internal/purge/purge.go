// Package purge deletes every span and stream state of deleted projects:
// their spans in ClickHouse (all versions, tombstones included), their
// span batches still queued or dead-lettered in JetStream and their delete
// epochs. The
// gateway calls it (POST /internal/projects/purge) before it deletes the
// projects.
package purge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
)

// Purger deletes projects' spans.
type Purger struct {
	CH driver.Conn
	// Cluster is the ClickHouse cluster of the replicated spans_local
	// tables; "" for the single-server schema (table spans).
	Cluster string
	JS      jetstream.JetStream // nil: no stream to purge
	Epochs  *dedup.Epochs       // nil: none kept
	// Poll is how often the mutation's end is checked (default 50ms).
	Poll time.Duration
}

// Projects deletes the projects' spans and waits until ClickHouse has
// applied the deletion, so nothing of them is readable when it returns.
// The queued batches go first, so the writer cannot insert them after the
// delete. ALTER TABLE … DELETE is a mutation (ClickHouse 18.16 and later);
// its end is read from system.mutations, since mutations_sync does not
// exist on 18.16. Idempotent.
func (p *Purger) Projects(ctx context.Context, ids []uuid.UUID) error {
	if p.JS != nil {
		// Batches not yet written, and those the writer parked.
		for stream, subject := range map[string]func(string) string{
			spanstream.SpanStream: spanstream.SpanSubject, spanstream.DeadLetterStream: spanstream.DeadLetterSubject} {
			s, err := p.JS.Stream(ctx, stream)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				continue
			}
			if err != nil {
				return unavailable(fmt.Errorf("stream %s: %w", stream, err))
			}
			for _, id := range ids {
				if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject(id.String()))); err != nil {
					return unavailable(fmt.Errorf("purge %s of %s: %w", stream, id, err))
				}
			}
		}
	}
	if p.Epochs != nil {
		for _, id := range ids {
			if err := p.Epochs.Forget(ctx, id.String()); err != nil {
				return err
			}
		}
	}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = "'" + id.String() + "'" // a UUID's text needs no escaping
	}
	table, onCluster := "spans", ""
	if p.Cluster != "" {
		table, onCluster = "spans_local", " ON CLUSTER "+p.Cluster
	}
	if err := p.CH.Exec(ctx, "ALTER TABLE "+table+onCluster+" DELETE WHERE project_id IN ("+strings.Join(list, ", ")+")"); err != nil {
		return unavailable(fmt.Errorf("delete spans: %w", err))
	}
	poll := p.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	for {
		var pending uint64
		if err := p.CH.QueryRow(ctx, `SELECT count() FROM system.mutations
			WHERE database = currentDatabase() AND table = ? AND is_done = 0`, table).Scan(&pending); err != nil {
			return unavailable(fmt.Errorf("wait for the span delete: %w", err))
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return unavailable(fmt.Errorf("wait for the span delete: %w", ctx.Err()))
		case <-time.After(poll):
		}
	}
}

func unavailable(err error) error { return errs.Wrap(errs.Unavailable, "tracing.purge", err) }
