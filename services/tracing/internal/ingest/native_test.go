package ingest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// TestDecodeJSONWholeBody: a body is one JSON object and nothing else; a
// second value after it (found by FuzzIngestHTTP: it answered 202 and
// ignored the rest) is malformed, not silently dropped.
func TestDecodeJSONWholeBody(t *testing.T) {
	for _, body := range []string{`{"spans":[]} x`, `{"spans":[]}{"spans":[]}`, `{"spans":[]} []`, `{} 1`, `{} ]`, `{} }`} {
		_, err := ingest.DecodeJSON([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, errs.Invalid, errs.KindOf(err), body)
	}
	for _, body := range []string{`{"spans":[]}`, "{\"spans\":[]}\n", " {} \r\n\t"} {
		_, err := ingest.DecodeJSON([]byte(body))
		assert.NoError(t, err, body)
	}
}
