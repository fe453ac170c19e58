package evalrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

type fakeMetrics struct {
	calls int
	err   error
}

func (f *fakeMetrics) Refresh(context.Context, scope.Scope, *evaluation.Run, []string) error {
	f.calls++
	return f.err
}

// TestMetricsJobOnClosedRun: a metrics job whose run is closed (before it
// starts, or while it computes: the registry refuses the write with 409)
// is done, not failed; the consumer would otherwise mark the closed run
// failed over the status its closer chose.
func TestMetricsJobOnClosedRun(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		closed := strings.HasPrefix(id, "c")
		_, _ = io.WriteString(w, fmt.Sprintf(`{"count":1,"run":{"id":%q,"status":"errors","flags":{"is_closed":%t},"data":{"steps":[]}}}`, id, closed))
	}))
	defer reg.Close()
	m := &fakeMetrics{}
	x := &Executor{Client: registryclient.New(reg.URL, "tok", time.Second, 0), Metrics: m, Worker: "w"}
	job := func(run string) evaluation.Job {
		return evaluation.Job{Kind: evaluation.KindMetrics, ProjectID: uuid.NewString(), RunID: run}
	}
	ctx := context.Background()

	assert.NoError(t, x.Handle(ctx, ctx, job("cccccccc-0000-0000-0000-000000000000")))
	assert.Equal(t, 0, m.calls, "a closed run's metrics are not recomputed")

	m.err = fmt.Errorf("store metrics: %w", svcclient.ErrClosed)
	assert.NoError(t, x.Handle(ctx, ctx, job("aaaaaaaa-0000-0000-0000-000000000000")), "closed while computing")
	assert.Equal(t, 1, m.calls)

	boom := errors.New("boom")
	m.err = boom
	assert.ErrorIs(t, x.Handle(ctx, ctx, job("aaaaaaaa-0000-0000-0000-000000000000")), boom, "other failures still reach the consumer")
}
