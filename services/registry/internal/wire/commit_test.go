package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
)

func TestRevisionReadsInOrderAndTheFirstErrorWins(t *testing.T) {
	b := read(t, `{"name": 1, "slug": "a/b", "variant_id": "x"}`)
	b.Revision("testset", false, true)
	loc, _ := fieldErr(t, b.Err())
	assert.Equal(t, []any{"body", "name"}, loc, "the header is read first")

	b = read(t, `{"slug": "s", "artifact_id": "x", "query_variant_id": "y"}`)
	r := b.Revision("query", true, false)
	loc, _ = fieldErr(t, b.Err())
	assert.Equal(t, []any{"body", "query_variant_id"}, loc, "queries read no artifact id")
	assert.Equal(t, "s", r.SlugOr())
}

func TestCommitsTakeDataOrDelta(t *testing.T) {
	both := `{"environment_variant_id": "6f1c3b5e-0000-4000-8000-000000000001", "data": {}, "delta": {}}`
	_, err := EnvironmentCommit(read(t, both), "environment_revision")
	assert.Equal(t, errs.Invalid, errs.KindOf(err))
	assert.Contains(t, err.Error(), "not both")

	_, _, err = TestsetCommit(read(t, `{}`))
	assert.Equal(t, errs.Invalid, errs.KindOf(err))

	_, err = EnvironmentCommit(read(t, `{"data": {}}`), "environment_revision")
	loc, _ := fieldErr(t, err)
	assert.Equal(t, []any{"body", "environment_revision", "environment_variant_id"}, loc)

	_, err = QueryCommit(read(t, `{}`), "query_revision")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "query_revision.query_variant_id is required.")

	_, err = WorkflowCommit(read(t, `{}`), "application", []any{"body", "application_revision"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "application_revision.application_variant_id is required.")

	ci, err := WorkflowCommit(read(t, `{"workflow_variant_id": "6f1c3b5e-0000-4000-8000-000000000001", "flags": {"x": true}}`), "evaluator", nil)
	require.NoError(t, err)
	assert.Nil(t, ci.Header.Flags, "revision flags are inferred, never sent")
	assert.Equal(t, "6f1c3b5e-0000-4000-8000-000000000001", ci.VariantID.String(), "the workflow alias of the variant id")
}
