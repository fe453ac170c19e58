package evaluations

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// Jobs publishes evaluation jobs on the EVALS stream (pkg/evaljob); the
// registry's main wires a NATS publisher. The service answers 503 on the
// routes that need it while it is nil.
type Jobs interface {
	Publish(ctx context.Context, job evaluation.Job) error
}

// Config tunes the service.
type Config struct {
	// DefaultQueuesForAllRuns gives every run a default queue, not only
	// runs with a human step (the compatible platform's
	// EVALUATIONS_DEFAULT_QUEUES_FOR_ALL_RUNS).
	DefaultQueuesForAllRuns bool
	// MaxLimit bounds every query: a query without a limit, or with a
	// larger one, returns at most MaxLimit records and a windowing to
	// resume from. Default 1000.
	MaxLimit int
	// MaxBatch bounds the records of one write or delete. Default 10000.
	MaxBatch int
	// RefreshWait bounds how long RefreshMetrics waits for the metrics
	// job it published to store the records it answers; 0 answers at once.
	RefreshWait time.Duration
}

// Limits of one record's fields.
const (
	MaxRepeats   = 1000
	MaxSteps     = 1000
	MaxStepKey   = 255
	maxWorkerLen = 255
	maxLease     = 24 * time.Hour
)

// Service is the evaluation records' use cases.
type Service struct {
	store Store
	jobs  Jobs
	cfg   Config
	now   func() time.Time
	waits WaitsFunc // nil: progress shows no provider waits
}

// NewService returns the use cases over store; jobs may be nil until the
// registry has a job stream (metrics/refresh then answers 503).
func NewService(store Store, jobs Jobs, cfg Config) *Service {
	if cfg.MaxLimit <= 0 {
		cfg.MaxLimit = 1000
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 10000
	}
	return &Service{store: store, jobs: jobs, cfg: cfg, now: func() time.Time { return time.Now().UTC() }}
}

// SetJobs wires the job publisher after construction (the registry's main
// builds the NATS side after the service).
func (s *Service) SetJobs(j Jobs) { s.jobs = j }

// The accessors below serve the use cases built on the records in
// sibling packages (simpleevals, evalreports): they read the records
// through the store, publish through the service's job stream and stamp
// with its clock, so they answer like the records' own use cases.

// Store is the records' store, for reads that page through records.
func (s *Service) Store() Store { return s.store }

// Jobs is the job publisher; nil until the registry has a job stream.
func (s *Service) Jobs() Jobs { return s.jobs }

// Config is the service's configuration, its defaults applied.
func (s *Service) Config() Config { return s.cfg }

// Now is the service's clock (UTC).
func (s *Service) Now() time.Time { return s.now() }

// InTx runs fn with a service whose store calls belong to one
// transaction (Store.InTx): use cases that write several kinds of
// records at once are all or nothing.
func (s *Service) InTx(ctx context.Context, fn func(tx *Service) error) error {
	return s.store.InTx(ctx, func(st Store) error {
		tx := *s
		tx.store = st
		return fn(&tx)
	})
}

// newID mints a time-ordered id, so id windowing is creation order.
func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// user is the caller's id, or nil for a system call.
func user(sc scope.Scope) *string {
	if sc.UserID == uuid.Nil {
		return nil
	}
	u := sc.UserID.String()
	return &u
}

// ParseID reads a record id sent in a body; a malformed one is a 422 at loc.
func ParseID(v string, loc ...any) (uuid.UUID, error) {
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil, errs.Field("Input should be a valid UUID", v, loc...)
	}
	return id, nil
}

// CheckStatus refuses an unknown status at loc; "" is def.
func CheckStatus(st Status, def Status, loc ...any) (Status, error) {
	if st == "" {
		return def, nil
	}
	for _, s := range Statuses {
		if st == s {
			return st, nil
		}
	}
	return "", errs.Field("Input should be 'pending', 'queued', 'running', 'success', 'failure', 'errors' or 'cancelled'", string(st), loc...)
}

// CheckObjects applies the registry's limits to a record's flags, tags and
// meta: objects only, tags of booleans and strings, within their sizes.
func CheckObjects(flags, tags, meta json.RawMessage, loc ...any) error {
	at := func(k string) []any { return append(append([]any{}, loc...), k) }
	for _, f := range []struct {
		k   string
		v   json.RawMessage
		max int
	}{{"flags", flags, wire.MaxTagsBytes}, {"tags", tags, wire.MaxTagsBytes}, {"meta", meta, wire.MaxMetaBytes}} {
		if wire.IsNull(f.v) {
			continue
		}
		var m map[string]any
		if json.Unmarshal(f.v, &m) != nil {
			return errs.Field("Input should be a valid dictionary", nil, at(f.k)...)
		}
		if len(f.v) > f.max {
			return errs.Field("Object is too large", nil, at(f.k)...)
		}
		if f.k == "tags" && !wire.ValidTags(m) {
			return errs.Field("Tag values must be booleans, strings or nested objects of them", nil, at(f.k)...)
		}
	}
	return nil
}

// Nullable turns a JSON null into nil, so it is stored as NULL.
func Nullable(v json.RawMessage) json.RawMessage {
	if wire.IsNull(v) {
		return nil
	}
	return v
}

// window bounds a query: the limit asked, capped at MaxLimit, or MaxLimit.
func (s *Service) window(w *versioned.Windowing) *versioned.Windowing {
	out := versioned.Windowing{}
	if w != nil {
		out = *w
	}
	if out.Limit == nil || *out.Limit > s.cfg.MaxLimit || *out.Limit < 1 {
		n := s.cfg.MaxLimit
		if out.Limit != nil && *out.Limit >= 1 && *out.Limit < n {
			n = *out.Limit
		}
		out.Limit = &n
	}
	return &out
}

// Page is a page of records and the windowing to send for the next one
// (nil on the last page).
type Page[T any] struct {
	Items []T
	Next  *versioned.Windowing
}

// page cuts the windowing of the next page: present when the page is full.
func page[T any](items []T, w *versioned.Windowing, id func(*T) string) Page[T] {
	p := Page[T]{Items: items}
	if len(items) > 0 && len(items) >= w.LimitValue() {
		next, err := uuid.Parse(id(&items[len(items)-1]))
		if err == nil {
			nw := *w
			nw.Next = &next
			p.Next = &nw
		}
	}
	return p
}

// checkBatch refuses a write of more than MaxBatch records, naming key.
func (s *Service) checkBatch(n int, key string) error {
	if n > s.cfg.MaxBatch {
		return errs.Field("List should have at most "+itoa(s.cfg.MaxBatch)+" items", nil, "body", key)
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// ptrTime is t as a pointer.
func ptrTime(t time.Time) *time.Time { return &t }

// guardRuns locks the runs (shared, or exclusive) and refuses, with the
// compatible platform's 409, a write to a closed one; a missing run is a 422 at loc
// of its first mention. It returns the runs by id.
func guardRuns(ctx context.Context, st Store, p uuid.UUID, ids []uuid.UUID, exclusive bool, loc func(id uuid.UUID) []any) (map[uuid.UUID]*Run, error) {
	uniq := DedupIDs(ids)
	runs, err := st.LockRuns(ctx, p, uniq, exclusive)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*Run, len(runs))
	for i := range runs {
		id, _ := uuid.Parse(runs[i].ID)
		out[id] = &runs[i]
	}
	for _, id := range uniq {
		r, ok := out[id]
		if !ok {
			return nil, RunNotFound(id.String(), loc(id)...)
		}
		if r.Flags.IsClosed {
			return nil, ClosedRun(r.ID)
		}
	}
	return out, nil
}

// DedupIDs drops repeated ids, keeping the first of each in order.
func DedupIDs(ids []uuid.UUID) []uuid.UUID {
	seen := make(map[uuid.UUID]bool, len(ids))
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// UpTo is a windowing that returns up to n records (lookups by id lists,
// already bounded by MaxBatch).
func UpTo(n int) *versioned.Windowing {
	n = max(n, 1)
	return &versioned.Windowing{Limit: &n}
}
