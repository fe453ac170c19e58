package dedup_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
)

// Two replicas share delete epochs through the KV bucket; a replica that
// starts later sees the deletes of the last window at once.
func TestEpochsAreSharedBetweenReplicas(t *testing.T) {
	ns := natstest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func() *dedup.Epochs {
		conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Drain() })
		e, err := dedup.Open(t.Context(), conn.JS, time.Minute)
		require.NoError(t, err)
		return e
	}
	a, b := open(), open()
	const p = "0193e8a0-0000-7000-8000-000000000001"
	require.Zero(t, a.Get(p))
	require.NoError(t, a.Bump(t.Context(), p))
	ea := a.Get(p)
	require.NotZero(t, ea, "the deleting replica sees its bump before it answers")
	deadline := time.Now().Add(10 * time.Second)
	for b.Get(p) != ea && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, ea, b.Get(p), "the other replica learns it through the watch")
	assert.Equal(t, ea, open().Get(p), "a new replica loads it on start")
	require.NoError(t, b.Bump(t.Context(), p))
	assert.Greater(t, b.Get(p), ea, "every delete moves the epoch on")
}
