package workflows_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

func newService(t *testing.T) *workflows.Service {
	reg := versionedtest.New(t)
	return workflows.NewService(reg, environments.NewService(reg), catalog.MustNew("svc"),
		workflows.Config{Provider: "svc", ServicesURL: "http://assay.test/services"})
}

// TestSimpleApplicationCreateEditArchive: create writes the artifact with
// its role flag, a variant named after it, v0 and v1 in one transaction;
// an edit without data keeps the data; archive and unarchive round-trip.
func TestSimpleApplicationCreateEditArchive(t *testing.T) {
	wf := newService(t)
	uc := wf.Simple("application")
	sc := versionedtest.Scope()
	ctx := context.Background()

	data := json.RawMessage(`{"uri":"user:custom:my-app:v0","url":"http://app.test/run"}`)
	rec, err := uc.Create(ctx, sc, &versioned.Artifact{Slug: "app"}, data, []any{"body", "application", "data"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"is_application":true,"is_evaluator":false,"is_snippet":false}`, string(rec.Artifact.Flags))
	assert.Equal(t, "app", *rec.Variant.Name)
	assert.Equal(t, 1, rec.Revision.Version)
	log, err := wf.Lineage("application").Log(ctx, sc, versioned.LogTarget{VariantID: &rec.Variant.ID})
	require.NoError(t, err)
	assert.Len(t, log, 2)

	edited, err := uc.Edit(ctx, sc, rec.Artifact.ID, versioned.Header{Name: versionedtest.Str("App")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "App", *edited.Artifact.Name)
	assert.Equal(t, 2, edited.Revision.Version)
	assert.JSONEq(t, string(rec.Revision.Data), string(edited.Revision.Data), "an edit without data keeps it")

	archived, err := uc.Archive(ctx, sc, rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.NotNil(t, archived.Artifact.DeletedAt)
	list, err := uc.Query(ctx, sc, versioned.Query{})
	require.NoError(t, err)
	assert.Empty(t, list)
	back, err := uc.Archive(ctx, sc, rec.Artifact.ID, false)
	require.NoError(t, err)
	assert.Nil(t, back.Artifact.DeletedAt)

	// Evaluators list only evaluators.
	evs, err := wf.Simple("evaluator").Query(ctx, sc, versioned.Query{})
	require.NoError(t, err)
	assert.Empty(t, evs)
}
