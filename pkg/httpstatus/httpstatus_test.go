package httpstatus_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpstatus"
)

// TestEveryKindHasAnErrorStatus: each kind maps to a 4xx or 5xx, an
// unclassified error (Internal) to 500, and the kinds clients branch on
// to their statuses.
func TestEveryKindHasAnErrorStatus(t *testing.T) {
	for k := errs.Internal; k <= errs.Timeout; k++ {
		s := httpstatus.Of(k)
		assert.True(t, s >= 400 && s < 600, "kind %d: %d", k, s)
	}
	assert.Equal(t, http.StatusInternalServerError, httpstatus.Of(errs.Internal))
	assert.Equal(t, http.StatusUnprocessableEntity, httpstatus.Of(errs.Unprocessable))
	assert.Equal(t, http.StatusServiceUnavailable, httpstatus.Of(errs.Unavailable))
	assert.Equal(t, http.StatusGatewayTimeout, httpstatus.Of(errs.Timeout))
}
