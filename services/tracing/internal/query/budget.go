package query

import (
	"context"
	"sync"

	"github.com/assayhq/assay/pkg/errs"
)

// Budget bounds the span rows that reads hold in this service's memory:
// per read (Limits.MaxReadBytes), per project (Limits.ProjectReadBytes)
// and in all (Limits.TotalReadBytes). Rows are charged as they are read
// from ClickHouse, so a read over a limit stops there, rather than after
// it has decoded and rendered an answer of any size; a read gives its
// bytes back when its answer is written (the HTTP layer calls Release
// after rendering), since decoding and rendering hold the rows until then.
//
// The unit is row bytes as read (the columns' text), not heap: decoding
// and the JSON answer cost several times that (about 11× for 1 MiB spans
// before this bound), so the heap reads take is bounded by a multiple of
// TotalReadBytes.
type Budget struct {
	limits Limits

	mu        sync.Mutex
	total     int64
	byProject map[string]int64
	peak      int64 // highest bytes one project held
}

// NewBudget returns the budget of limits (zero fields take the defaults).
func NewBudget(l Limits) *Budget {
	return &Budget{limits: l.orDefaults(), byProject: map[string]int64{}}
}

// Read is one read's share of the budget.
type Read struct {
	b       *Budget
	project string
	n       int64
	once    sync.Once
}

// Open starts a read for project; Release ends it.
// A nil budget's reads are unbounded.
func (b *Budget) Open(project string) *Read { return &Read{b: b, project: project} }

// Charge takes n more bytes for the read, or answers why not: 422 over
// the read's own limit (the caller must page), 429 over the project's
// (its other reads hold the rest: retry), 503 over the service's.
func (r *Read) Charge(n int64) error {
	if r == nil || r.b == nil {
		return nil
	}
	b := r.b
	l := b.limits
	if r.n+n > l.MaxReadBytes {
		return errs.Message(errs.Unprocessable, "tracing.read_too_large",
			"the answer holds more span data than one read may; ask for fewer spans (windowing.limit) and page with the cursor, or narrow the filter",
			map[string]any{"limit": "TRACING_QUERY_MAX_READ_BYTES", "value": l.MaxReadBytes})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byProject[r.project]+n > l.ProjectReadBytes {
		return errs.Message(errs.TooManyRequests, "tracing.project_reads_busy",
			"this project's reads in flight hold as much span data as they may; retry after the Retry-After delay",
			map[string]any{"limit": "TRACING_QUERY_PROJECT_READ_BYTES", "value": l.ProjectReadBytes})
	}
	if b.total+n > l.TotalReadBytes {
		return errs.Message(errs.Unavailable, "tracing.reads_busy",
			"tracing's reads in flight hold as much span data as they may; retry after the Retry-After delay",
			map[string]any{"limit": "TRACING_QUERY_TOTAL_READ_BYTES", "value": l.TotalReadBytes})
	}
	b.total += n
	b.byProject[r.project] += n
	b.peak = max(b.peak, b.byProject[r.project])
	r.n += n
	return nil
}

// Release gives the read's bytes back; only the first call counts.
func (r *Read) Release() {
	if r == nil || r.b == nil {
		return
	}
	r.once.Do(func() {
		b := r.b
		b.mu.Lock()
		defer b.mu.Unlock()
		b.total -= r.n
		if b.byProject[r.project] -= r.n; b.byProject[r.project] <= 0 {
			delete(b.byProject, r.project)
		}
	})
}

// InUse is the bytes the reads in flight hold.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Peak is the most bytes one project's reads have held at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

type readKey struct{}

// WithRead makes the reads under ctx charge r.
func WithRead(ctx context.Context, r *Read) context.Context {
	return context.WithValue(ctx, readKey{}, r)
}

func readFrom(ctx context.Context) *Read {
	r, _ := ctx.Value(readKey{}).(*Read)
	return r
}

// rowBytes is what a row read from ClickHouse holds: its columns' text
// (attr_values with its element headers) and a fixed part for the rest.
func rowBytes(r *Row) int64 {
	n := len(r.TraceID) + len(r.SpanID) + len(r.ParentID) + len(r.TraceType) + len(r.SpanType) + len(r.SpanKind) +
		len(r.SpanName) + len(r.StatusCode) + len(r.StatusMessage) + len(r.SessionID) + len(r.UserID) + len(r.AgentID) +
		len(r.Attributes) + len(r.Events) + len(r.Links) + len(r.Refs) + len(r.Hashes) + len(r.CreatedByID)
	for _, v := range r.AttrValues {
		n += len(v) + 16
	}
	return int64(n) + 256
}
