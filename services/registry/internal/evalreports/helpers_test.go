package evalreports_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
)

// The small helpers the comparison and export tests shared with the
// records' tests (services/registry/internal/evaluations/service_test.go)
// before the reports moved to their own package.

var ctx = context.Background()

func ref(id string) ev.Ref { return ev.Ref{ID: &id} }

// status is the HTTP status err renders as; err must not be nil.
func status(t *testing.T, err error) int {
	t.Helper()
	require.Error(t, err)
	return httpx.Status(errs.KindOf(err))
}
