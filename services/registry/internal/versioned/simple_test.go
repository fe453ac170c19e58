package versioned_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
)

// TestCreateRecordIsOneTransaction: a failing v1 commit leaves no
// artifact, variant or v0 behind, and a success writes v0 then v1.
func TestCreateRecordIsOneTransaction(t *testing.T) {
	reg := versionedtest.New(t)
	sc := versionedtest.Scope()
	ctx := context.Background()
	vh := func(a *versioned.Artifact) versioned.Header { return versioned.Header{Name: &a.Slug} }
	commit := func(fail bool) func(*versioned.Service, *versioned.Variant, bool) (*versioned.Revision, error) {
		return func(tx *versioned.Service, v *versioned.Variant, initial bool) (*versioned.Revision, error) {
			r := versioned.Revision{VariantID: v.ID}
			if initial {
				r.Message = versionedtest.Str(versioned.InitialMessage)
			} else if fail {
				return nil, errors.New("v1 refused")
			} else {
				r.Data = []byte(`{"n":1}`)
			}
			return tx.Commit(ctx, sc, versioned.Queries, versioned.Commit{Revision: r, Initial: initial})
		}
	}

	_, err := reg.CreateRecord(ctx, sc, versioned.Queries, &versioned.Artifact{Slug: "q"}, vh, commit(true))
	require.EqualError(t, err, "v1 refused")
	as, err := reg.QueryArtifacts(ctx, sc, versioned.Queries, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.Empty(t, as, "the failed create left an artifact")
	vs, err := reg.QueryVariants(ctx, sc, versioned.Queries, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.Empty(t, vs, "the failed create left a variant")

	rec, err := reg.CreateRecord(ctx, sc, versioned.Queries, &versioned.Artifact{Slug: "q"}, vh, commit(false))
	require.NoError(t, err)
	assert.Equal(t, "q", *rec.Variant.Name)
	assert.Equal(t, 1, rec.Revision.Version)
	assert.JSONEq(t, `{"n":1}`, string(rec.Revision.Data))
	log, err := reg.Log(ctx, sc, versioned.Queries, versioned.LogTarget{VariantID: &rec.Variant.ID})
	require.NoError(t, err)
	require.Len(t, log, 2)
}
