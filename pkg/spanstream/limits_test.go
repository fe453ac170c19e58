package spanstream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
)

// TestSpanLimitsFitOneBatch: the span limits accept a span as large as
// one batch message carries and refuse one byte more. spanmodel holds its
// own copy of MaxBatchBytes (it may not import this package, which pulls
// in NATS); this test fails when the two part.
func TestSpanLimitsFitOneBatch(t *testing.T) {
	assert.NoError(t, spanmodel.Limits{MaxBytes: spanstream.MaxBatchBytes}.Validate())
	assert.Error(t, spanmodel.Limits{MaxBytes: spanstream.MaxBatchBytes + 1}.Validate())
}
