package environments_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
)

// TestSimpleEnvironmentCreateArchiveGuard: create writes v0 and v1 in
// one transaction; archive covers the default variant; Guard sets the flag.
func TestSimpleEnvironmentCreateArchiveGuard(t *testing.T) {
	envs := environments.NewService(versionedtest.New(t))
	uc := envs.Simple()
	sc := versionedtest.Scope()
	ctx := context.Background()

	a := &versioned.Artifact{Slug: "production", Header: versioned.Header{Flags: json.RawMessage(`{"other":1}`)}}
	rec, err := uc.Create(ctx, sc, a, nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"is_guarded":false}`, string(rec.Artifact.Flags))
	assert.Equal(t, 1, rec.Revision.Version)
	log, err := envs.Lineage().Log(ctx, sc, versioned.LogTarget{VariantID: &rec.Variant.ID})
	require.NoError(t, err)
	assert.Len(t, log, 2)

	archived, err := uc.Archive(ctx, sc, rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.NotNil(t, archived.Artifact.DeletedAt)
	assert.NotNil(t, archived.Variant.DeletedAt, "archive covers the default variant")
	back, err := uc.Archive(ctx, sc, rec.Artifact.ID, false)
	require.NoError(t, err)
	assert.Nil(t, back.Artifact.DeletedAt)
	assert.Nil(t, back.Variant.DeletedAt)

	guarded, err := envs.Guard(ctx, sc, rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"is_guarded":true}`, string(guarded.Artifact.Flags))
	missing, err := envs.Guard(ctx, versionedtest.Scope(), rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.Nil(t, missing, "another project's environment is not found")
}
