package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
)

// A commit that cannot get its variant's row lock gives up after the
// configured lock_timeout with a 503, and writes nothing. The lock is held
// by a second connection for the whole request, so the outcome does not
// depend on timing.
func TestCommitLockTimeout(t *testing.T) {
	s := newServerWith(t, tcfile.Limits{MaxRows: 10, MaxBytes: 1 << 20}, pgstore.WithLockTimeout(50*time.Millisecond))
	_, vid := mkWorkflow(t, s, "workflows", "workflow", "locked")
	commitWF(t, s, "workflows", "workflow", vid, m{"uri": "code", "parameters": m{"a": 1}})

	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM variants WHERE id = $1 FOR UPDATE`, vid)
	require.NoError(t, err)

	r := s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{"uri": "code", "parameters": m{"a": 2}}}})
	require.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	d := obj(t, r.json(t), "detail")
	assert.Equal(t, "commit_lock_timeout", d["code"])
	assert.NotEmpty(t, d["message"])
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	require.NoError(t, tx.Rollback(ctx))

	// Nothing was written; once the lock is free the same commit lands as v1.
	got := s.ok(t, "POST", "/workflows/revisions/query", m{"workflow_variant_refs": []m{{"id": vid}}})
	assert.Equal(t, float64(1), got["count"])
	c := commitWF(t, s, "workflows", "workflow", vid, m{"uri": "code", "parameters": m{"a": 2}})
	assert.Equal(t, "1", obj(t, c, "workflow_revision")["version"])
}
