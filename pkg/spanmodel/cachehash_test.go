package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// TestCacheHashIsTheReferenceHash: the hash the evaluation worker looks
// up is blake2b-128 over the compact sorted JSON of the references (the
// testset variant and revision left out) and keyed links; the value was
// computed with Python's hashlib and json.dumps(sort_keys=True).
func TestCacheHashIsTheReferenceHash(t *testing.T) {
	refs := []spanmodel.Reference{
		{Key: "application", ID: "11111111-1111-1111-1111-111111111111", Slug: "app"},
		{Key: "testcase", ID: "22222222-2222-2222-2222-222222222222"},
		{Key: "testset_revision", ID: "33333333-3333-3333-3333-333333333333"},
	}
	links := []spanmodel.Link{{Key: "invocation", SpanID: "00000000000000aa", TraceID: "000000000000000000000000000000bb"}}
	assert.Equal(t, "c55c964bc1259f77cc713d6a4d80fa0f", spanmodel.CacheHash(refs, links))
	assert.Empty(t, spanmodel.CacheHash(nil, nil))
	assert.NotEqual(t, spanmodel.CacheHash(refs, nil), spanmodel.CacheHash(refs, links))
}

// TestCacheHashNormalisesIDs: ids given undashed or upper-case hash as the
// normaliser stores them.
func TestCacheHashNormalisesIDs(t *testing.T) {
	refs := []spanmodel.Reference{{Key: "application", ID: "11111111111111111111111111111111", Slug: "app"},
		{Key: "testcase", ID: "22222222-2222-2222-2222-222222222222"}}
	links := []spanmodel.Link{{Key: "invocation", SpanID: "00000000000000AA", TraceID: "00000000-0000-0000-0000-0000000000bb"}}
	assert.Equal(t, "c55c964bc1259f77cc713d6a4d80fa0f", spanmodel.CacheHash(refs, links))
}
