package chstore_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/services/writer/internal/chstore"
)

func TestRetentionDropsOnlyExpiredPartitions(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, cfg, log))
	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close()

	short, long := uuid.NewString(), uuid.NewString()
	store, err := chstore.New(conn, chstore.RetentionConfig{Default: 90 * 24 * time.Hour, Projects: short + "=168h"}, log)
	require.NoError(t, err)
	old := time.Now().Add(-10 * 24 * time.Hour)
	span := func(id string) *spanspb.Span {
		return &spanspb.Span{TraceId: "0123456789abcdef0123456789abcdef", SpanId: id, StartUnixMicro: old.UnixMicro(), EndUnixMicro: old.UnixMicro()}
	}
	n, err := store.Insert(ctx, []*spanspb.SpanBatch{
		{ProjectId: short, ReceivedUnixNano: old.UnixNano(), Spans: []*spanspb.Span{span("0000000000000001")}},
		{ProjectId: long, ReceivedUnixNano: old.UnixNano(), Spans: []*spanspb.Span{span("0000000000000002")}},
	})
	require.NoError(t, err)
	require.Equal(t, 2, n)

	dropped, err := store.DropExpired(ctx)
	require.NoError(t, err)
	assert.Len(t, dropped, 1)
	var left []string
	rows, err := conn.Query(ctx, "SELECT project_id FROM spans")
	require.NoError(t, err)
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		left = append(left, p)
	}
	assert.Equal(t, []string{long}, left, "the 7-day project's span received 10 days ago is gone, the 90-day project's stays")
}

func TestParseProjectsRejectsBadEntries(t *testing.T) {
	for _, bad := range []string{"nope", "not-a-uuid=1h", uuid.NewString() + "=soon", uuid.NewString() + "=-1h"} {
		_, err := chstore.ParseProjects(bad)
		assert.Error(t, err, bad)
	}
}
