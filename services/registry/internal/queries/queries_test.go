package queries_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
)

// tracing stands in for the tracing service, as the HTTP tests' fake does:
// the client's wire mapping is tested in tracingclient.
type tracing struct{ calls []tracingclient.Query }

func (f *tracing) Run(_ context.Context, _ scope.Scope, q tracingclient.Query) (*tracingclient.Result, error) {
	f.calls = append(f.calls, q)
	return &tracingclient.Result{TraceIDs: []string{"t1"}}, nil
}

// TestSimpleQueryAndRetrieveAndRun: create writes v0 and v1 in one
// transaction; retrieve runs the stored query only when asked, with the
// request's limit over the stored windowing; archive covers the variant.
func TestSimpleQueryAndRetrieveAndRun(t *testing.T) {
	tr := &tracing{}
	qs := queries.NewService(versionedtest.New(t), tr)
	uc := qs.Simple()
	sc := versionedtest.Scope()
	ctx := context.Background()

	data := json.RawMessage(`{"filtering":{"conditions":[]},"windowing":{"limit":5}}`)
	rec, err := uc.Create(ctx, sc, &versioned.Artifact{Slug: "errors"}, data, []any{"body", "query", "data"})
	require.NoError(t, err)
	assert.Equal(t, 1, rec.Revision.Version)
	log, err := qs.Lineage().Log(ctx, sc, versioned.LogTarget{VariantID: &rec.Variant.ID})
	require.NoError(t, err)
	assert.Len(t, log, 2)

	slug := "errors"
	refs := versioned.Refs{Artifact: &versioned.Ref{Slug: &slug}}
	r, err := qs.Retrieve(ctx, sc, refs, queries.Include{})
	require.NoError(t, err)
	assert.Equal(t, rec.Revision.ID, r.ID)
	assert.Empty(t, tr.calls, "retrieve without include runs nothing")

	limit := 2
	r, err = qs.Retrieve(ctx, sc, refs, queries.Include{TraceIDs: true, Window: &versioned.Windowing{Limit: &limit}})
	require.NoError(t, err)
	require.Len(t, tr.calls, 1)
	assert.JSONEq(t, `{"limit":2}`, string(tr.calls[0].Windowing))
	var d map[string]any
	require.NoError(t, json.Unmarshal(r.Data, &d))
	assert.Equal(t, []any{"t1"}, d["trace_ids"])
	assert.NotContains(t, d, "traces")

	none, err := qs.Retrieve(ctx, versionedtest.Scope(), refs, queries.Include{TraceIDs: true})
	require.NoError(t, err)
	assert.Nil(t, none, "another project's query is not found")

	archived, err := uc.Archive(ctx, sc, rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.NotNil(t, archived.Variant.DeletedAt)
	back, err := uc.Archive(ctx, sc, rec.Artifact.ID, false)
	require.NoError(t, err)
	assert.Nil(t, back.Artifact.DeletedAt)
}
