// Package dedup keeps JetStream's retry dedup from swallowing a deliberate
// re-send after a delete.
//
// Each ingest request is published with Nats-Msg-Id = hash(project, route,
// body), so an exporter's retry of the same body within the dedup window is
// stored once. Without more, POST, DELETE, POST of the same trace inside the
// window loses the second POST: its id equals the first one's. A delete
// therefore bumps the project's delete epoch, and the epoch is part of every
// message id: a request sent after a delete never matches one sent before.
//
// Why per project and not per trace: the publisher sees the request, not its
// traces, and deletes are rare. The cost is that a retry that straddles a
// delete in the same project is stored twice, which is harmless: a re-ingest
// of a span id replaces the span (ReplacingMergeTree by version).
//
// Replicas share epochs through a NATS KV bucket (one key per project, TTL
// at least the dedup window: once the window has passed, no message id from
// before the delete can match any more, so the epoch may be forgotten).
// The replica that deletes updates its own view before answering; the
// others learn it through a KV watch within milliseconds, and a re-send
// that reaches another replica inside that gap can still be taken for a
// retry.
package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// Bucket is the KV bucket of delete epochs.
const Bucket = "TRACING_DELETE_EPOCHS"

// Epochs is the set of projects' delete epochs.
type Epochs struct {
	kv  jetstream.KeyValue // nil: this process only (tests, one replica)
	now func() time.Time

	mu sync.RWMutex
	m  map[string]uint64
}

// NewLocal returns epochs kept in this process only.
func NewLocal() *Epochs { return &Epochs{m: map[string]uint64{}, now: time.Now} }

// Open creates (or binds) the KV bucket and starts watching it until ctx
// ends; ttl must be at least the stream's dedup window.
func Open(ctx context.Context, js jetstream.JetStream, ttl time.Duration) (*Epochs, error) {
	return OpenReplicated(ctx, js, ttl, 1)
}

// OpenReplicated is Open with the bucket kept on replicas servers of a NATS
// cluster (TRACING_STREAM_REPLICAS, as the span stream): a delete's epoch
// must survive the loss of a server as the spans do.
func OpenReplicated(ctx context.Context, js jetstream.JetStream, ttl time.Duration, replicas int) (*Epochs, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, History: 1, TTL: ttl, Replicas: max(replicas, 1)})
	if err != nil {
		return nil, fmt.Errorf("delete epochs bucket: %w", err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch delete epochs: %w", err)
	}
	e := &Epochs{kv: kv, m: map[string]uint64{}, now: time.Now}
	// The initial values end with a nil entry; wait for them so the first
	// requests already see the deletes of the last window.
	for entry := range w.Updates() {
		if entry == nil {
			break
		}
		e.apply(entry)
	}
	go func() {
		defer func() { _ = w.Stop() }()
		for entry := range w.Updates() {
			if entry != nil {
				e.apply(entry)
			}
		}
	}()
	return e, nil
}

func (e *Epochs) apply(entry jetstream.KeyValueEntry) {
	if entry.Operation() != jetstream.KeyValuePut || len(entry.Value()) != 8 {
		return
	}
	e.set(entry.Key(), binary.BigEndian.Uint64(entry.Value()))
}

// set keeps the larger epoch: watch updates may arrive after a local bump.
func (e *Epochs) set(project string, v uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v > e.m[project] {
		e.m[project] = v
	}
}

// Get returns the project's epoch (0 when it had no delete lately).
func (e *Epochs) Get(project string) uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.m[project]
}

// Bump records a delete in project; call it before the delete is published.
func (e *Epochs) Bump(ctx context.Context, project string) error {
	v := uint64(e.now().UnixNano())
	if old := e.Get(project); v <= old {
		v = old + 1
	}
	if e.kv != nil {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], v)
		if _, err := e.kv.Put(ctx, project, b[:]); err != nil {
			return errs.Wrap(errs.Unavailable, "tracing.delete_epoch", fmt.Errorf("record the delete: %w", err))
		}
	}
	e.set(project, v)
	return nil
}

// Forget drops a purged project's epoch from the bucket and this replica:
// nothing keyed by the project stays in NATS. Other replicas keep their
// copy until they restart, which is harmless (an epoch only changes ids).
func (e *Epochs) Forget(ctx context.Context, project string) error {
	if e.kv != nil {
		if err := e.kv.Purge(ctx, project); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return errs.Wrap(errs.Unavailable, "tracing.delete_epoch", fmt.Errorf("forget the delete epoch: %w", err))
		}
	}
	e.mu.Lock()
	delete(e.m, project)
	e.mu.Unlock()
	return nil
}

// Publisher puts the project's delete epoch into every message id it
// publishes; messages without an id (tombstones) pass unchanged.
type Publisher struct {
	P      ingest.Publisher
	Epochs *Epochs
}

// Publish implements ingest.Publisher.
func (p Publisher) Publish(ctx context.Context, subject string, data []byte, msgID string) error {
	if msgID != "" {
		if ep := p.Epochs.Get(projectOf(subject)); ep != 0 {
			h := sha256.New()
			h.Write([]byte(msgID))
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], ep)
			h.Write(b[:])
			msgID = hex.EncodeToString(h.Sum(nil))
		}
	}
	return p.P.Publish(ctx, subject, data, msgID)
}

// projectOf reads the project back from a span subject.
func projectOf(subject string) string { return strings.TrimPrefix(subject, spanstream.SpanSubject("")) }
