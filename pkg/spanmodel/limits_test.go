package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
)

func TestLimitsValidate(t *testing.T) {
	assert.NoError(t, spanmodel.DefaultLimits.Validate())
	assert.NoError(t, spanmodel.Limits{}.Validate(), "zero fields take the defaults")
	for name, l := range map[string]spanmodel.Limits{
		"depth too small for the canonical ag paths": {MaxDepth: 4},
		"attributes too few for the derived fields":  {MaxAttributes: 8},
		"a span larger than a message carries":       {MaxBytes: spanstream.MaxBatchBytes + 1},
	} {
		assert.Error(t, l.Validate(), name)
	}
}
