package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/assayhq/assay/pkg/errs"
)

// Limits bound the work of one query, so that no caller can take
// ClickHouse's memory (or this service's) from the others: ClickHouse
// settings sent with every statement, and the size of the filters clients
// send. Variables: TRACING_QUERY_*.
type Limits struct {
	MaxMemory      int64 `split_words:"true" default:"2147483648" desc:"most memory ClickHouse may use for one query statement, in bytes (max_memory_usage); a query that needs more answers 422 naming this variable"`
	MaxResultBytes int64 `split_words:"true" default:"268435456" desc:"largest result one query statement may send back, in bytes, uncompressed (max_result_bytes); a larger one answers 422 naming this variable"`
	MaxQuerySize   int   `split_words:"true" default:"4194304" desc:"largest SQL text of one query statement, in bytes (max_query_size; filter values are part of the text): covers the largest filter the TRACING_QUERY_FILTER_* limits allow"`
	// The ClickHouse limits above bound the span store; these bound this
	// service's heap, which holds the rows a read returns until its answer
	// is written (package query, Budget).
	MaxReadBytes     int64 `split_words:"true" default:"33554432" desc:"most span row bytes (as read from ClickHouse: attributes, events, links and the other columns) one span or trace read may hold in tracing's memory; a read that needs more answers 422 naming this variable (page it: a smaller windowing.limit, then the cursor). The heap a read costs is several times its row bytes (decoding and the JSON answer)"`
	ProjectReadBytes int64 `split_words:"true" default:"67108864" desc:"most span row bytes the reads of one project in flight together may hold; past it a read answers 429 with Retry-After (at least TRACING_QUERY_MAX_READ_BYTES)"`
	TotalReadBytes   int64 `split_words:"true" default:"134217728" desc:"most span row bytes all reads in flight together may hold; past it a read answers 503 with Retry-After (at least TRACING_QUERY_PROJECT_READ_BYTES)"`
	Filter           FilterLimits
}

// FilterLimits bound a filtering tree. A filter over one
// answers 400 naming the limit and the condition. Variables:
// TRACING_QUERY_FILTER_*.
type FilterLimits struct {
	MaxDepth      int `split_words:"true" default:"10" desc:"deepest nesting of condition groups in a filter, and of a condition's value (objects and lists)"`
	MaxConditions int `split_words:"true" default:"50" desc:"most conditions and groups in one filter, the root group aside (and metric specs in one analytics query); ClickHouse 18.16 takes ~0.5 s to analyse 50"`
	MaxValues     int `split_words:"true" default:"1000" desc:"most values in one filter: each list element and each leaf of an object value counts one"`
	MaxValueBytes int `split_words:"true" default:"16384" desc:"longest value in a filter (its text: strings as they are, other values as JSON), in bytes"`
	MaxKeyBytes   int `split_words:"true" default:"1024" desc:"longest attribute key in a filter (with an object value, key.leaf), or metric spec path, in bytes"`
	MaxBytes      int `split_words:"true" default:"262144" desc:"most bytes of all values and keys of one filter together"`
}

// DefaultLimits are the documented defaults (the struct tags'); a zero
// field of the limits given to NewStore takes its default.
func DefaultLimits() Limits {
	return Limits{MaxMemory: 2 << 30, MaxResultBytes: 256 << 20, MaxQuerySize: 4 << 20,
		MaxReadBytes: 32 << 20, ProjectReadBytes: 64 << 20, TotalReadBytes: 128 << 20,
		Filter: FilterLimits{MaxDepth: 10, MaxConditions: 50, MaxValues: 1000, MaxValueBytes: 16 << 10, MaxKeyBytes: 1 << 10, MaxBytes: 256 << 10}}
}

func (l Limits) orDefaults() Limits {
	d := DefaultLimits()
	or := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = d.MaxMemory
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	l.MaxQuerySize = or(l.MaxQuerySize, d.MaxQuerySize)
	or64 := func(v, def int64) int64 {
		if v <= 0 {
			return def
		}
		return v
	}
	l.MaxReadBytes = or64(l.MaxReadBytes, d.MaxReadBytes)
	l.ProjectReadBytes = max(or64(l.ProjectReadBytes, d.ProjectReadBytes), l.MaxReadBytes)
	l.TotalReadBytes = max(or64(l.TotalReadBytes, d.TotalReadBytes), l.ProjectReadBytes)
	f := &l.Filter
	f.MaxDepth, f.MaxConditions = or(f.MaxDepth, d.Filter.MaxDepth), or(f.MaxConditions, d.Filter.MaxConditions)
	f.MaxValues, f.MaxValueBytes = or(f.MaxValues, d.Filter.MaxValues), or(f.MaxValueBytes, d.Filter.MaxValueBytes)
	f.MaxKeyBytes, f.MaxBytes = or(f.MaxKeyBytes, d.Filter.MaxKeyBytes), or(f.MaxBytes, d.Filter.MaxBytes)
	return l
}

// settings are the ClickHouse settings of every statement. readonly=2
// refuses writes (a compiler bug cannot become a write) but still lets the
// statement carry these settings; readonly=1 would refuse them. 18.16's
// protocol carries numbers only: the overflow modes keep their default,
// throw.
func (l Limits) settings(timeoutSeconds int) clickhouse.Settings {
	return clickhouse.Settings{
		// FINAL reads must not move the tombstone test before the merge.
		"optimize_move_to_prewhere": 0,
		"max_execution_time":        timeoutSeconds,
		"max_memory_usage":          int(l.MaxMemory),
		"max_result_bytes":          int(l.MaxResultBytes),
		"max_query_size":            l.MaxQuerySize,
		"readonly":                  2,
	}
}

// ClickHouse exception codes the store tells apart (dbms/src/Common/ErrorCodes.cpp).
const (
	chSyntaxError          = 62
	chTooManyRows          = 158
	chTimeoutExceeded      = 159
	chTooDeepAST           = 167
	chTooBigAST            = 168
	chCannotAllocateMemory = 173
	chSocketTimeout        = 209
	chNetworkError         = 210
	chTooManyQueries       = 202
	chMemoryLimitExceeded  = 241
	chAllConnectionTries   = 279
	chTooManyBytes         = 307
	chTooManyRowsOrBytes   = 396
)

// storeErr classifies a failed statement. A statement over its own limits
// is the caller's to narrow: 422 naming the limit (a retry would fail the
// same way, and other callers are not affected). The SQL text over
// max_query_size is a 400: the filter is too large. ClickHouse out of reach
// or over its server-wide limits is a 503. Any other exception is a
// statement the compiler should not have built: 500, logged.
func (s *Store) storeErr(op string, err error) error {
	cause := fmt.Errorf("%s: %w", op, err)
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) {
		// Network errors, and the context's deadline, which is later than
		// max_execution_time: the server did not even stop the statement.
		return &errs.Error{Kind: errs.Unavailable, Code: "tracing.storage_unavailable", Msg: "the span store did not answer; retry later", Err: cause}
	}
	switch ex.Code {
	case chMemoryLimitExceeded:
		if strings.Contains(ex.Message, "(for query)") {
			return s.overLimit("tracing.query_memory", "TRACING_QUERY_MAX_MEMORY", s.limits.MaxMemory,
				"the query needs more memory than one query may use; narrow the window or the filter", cause)
		}
		// The server's or the user's total: others' load, not this query.
		return &errs.Error{Kind: errs.Unavailable, Code: "tracing.storage_busy", Msg: "the span store is short of memory; retry later", Err: cause}
	case chTimeoutExceeded:
		return s.overLimit("tracing.query_timeout", "TRACING_QUERY_TIMEOUT", s.timeout.String(),
			"the query ran longer than its time limit; narrow the window or the filter", cause)
	case chTooManyRows, chTooManyBytes, chTooManyRowsOrBytes:
		return s.overLimit("tracing.query_result", "TRACING_QUERY_MAX_RESULT_BYTES", s.limits.MaxResultBytes,
			"the query's result is larger than one query may return; ask for fewer spans (windowing.limit) or a narrower filter", cause)
	case chSyntaxError:
		if strings.Contains(ex.Message, "Max query size exceeded") {
			return errs.Message(errs.Invalid, "tracing.query_too_large",
				"the filter makes the query text larger than allowed; send fewer or shorter values",
				map[string]any{"limit": "TRACING_QUERY_MAX_QUERY_SIZE", "value": s.limits.MaxQuerySize})
		}
	case chTooDeepAST, chTooBigAST:
		return errs.Message(errs.Invalid, "tracing.query_too_complex",
			"the filter makes the query too complex to run; send fewer conditions or values", map[string]any{"reason": ex.Message})
	case chTooManyQueries, chCannotAllocateMemory, chSocketTimeout, chNetworkError, chAllConnectionTries:
		return &errs.Error{Kind: errs.Unavailable, Code: "tracing.storage_busy", Msg: "the span store is busy; retry later", Err: cause}
	}
	return cause // Internal: logged, never rendered
}

// overLimit is a 422 naming the limit the query went over and its value.
func (s *Store) overLimit(code, limit string, value any, msg string, cause error) error {
	e := errs.Message(errs.Unprocessable, code, msg, map[string]any{"limit": limit, "value": value})
	e.Err = cause
	return e
}
