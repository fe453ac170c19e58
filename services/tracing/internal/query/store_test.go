package query

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/config"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

func openStore(t *testing.T, timeout time.Duration, lim Limits) *Store {
	t.Helper()
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))))
	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return NewStore(conn, timeout, lim)
}

// run reads every row of q through the store, as the readers do.
func run(s *Store, q string, args ...any) error {
	rows, cancel, err := s.query(context.Background(), "test", q, args...)
	if err != nil {
		return err
	}
	defer cancel()
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return s.storeErr("test", err)
	}
	return nil
}

// TestStatementLimits: each statement runs under the store's limits, and
// a statement over one is a client error naming the limit, not a 503.
func TestStatementLimits(t *testing.T) {
	// The memory and result limits get a time limit no loaded machine
	// reaches first; the time limit has a store of its own.
	s := openStore(t, time.Minute, Limits{MaxMemory: 32 << 20, MaxResultBytes: 1 << 20, MaxQuerySize: 4096})
	detail := func(t *testing.T, err error, kind errs.Kind, limit string) {
		t.Helper()
		require.Error(t, err)
		e := errs.From(err)
		assert.Equal(t, kind, e.Kind, "%v", err)
		assert.Equal(t, limit, e.Detail.(map[string]any)["limit"], "%v", err)
	}
	require.NoError(t, run(s, "SELECT count() FROM spans"))

	detail(t, run(s, "SELECT groupArray(number) FROM numbers(10000000)"), errs.Unprocessable, "TRACING_QUERY_MAX_MEMORY")
	detail(t, run(s, "SELECT toString(number) FROM numbers(1000000)"), errs.Unprocessable, "TRACING_QUERY_MAX_RESULT_BYTES")
	short := openStore(t, time.Second, Limits{})
	detail(t, run(short, "SELECT sleepEachRow(0.5) FROM numbers(10) SETTINGS max_block_size = 1"), errs.Unprocessable, "TRACING_QUERY_TIMEOUT")
	detail(t, run(s, "SELECT length(?)", string(make([]byte, 5000))), errs.Invalid, "TRACING_QUERY_MAX_QUERY_SIZE")

	// Writes are refused (readonly): a compiler bug cannot become one.
	err := run(s, "DROP TABLE spans")
	require.Error(t, err)
	assert.Equal(t, errs.Internal, errs.KindOf(err), "%v", err)
	// A statement ClickHouse cannot run is this service's bug: 500.
	assert.Equal(t, errs.Internal, errs.KindOf(run(s, "SELECT nosuchfunction(1)")))
	require.NoError(t, run(s, "SELECT count() FROM spans"), "the connection still serves")
}

// TestDefaultLimitsAreTheDocumentedOnes: DefaultLimits (what NewStore
// applies) and the envconfig defaults docs/configuration.md documents agree.
func TestDefaultLimitsAreTheDocumentedOnes(t *testing.T) {
	var l Limits
	require.NoError(t, config.Load("QUERY_LIMITS_TEST", &l))
	assert.Equal(t, DefaultLimits(), l)
	assert.Equal(t, DefaultLimits(), Limits{}.orDefaults())
}
