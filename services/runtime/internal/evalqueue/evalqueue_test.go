package evalqueue_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/runtime/internal/evalqueue"
	"github.com/assayhq/assay/services/runtime/internal/evalrun"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

// jsPublisher publishes straight to JetStream.
type jsPublisher struct{ js jetstream.JetStream }

func (p jsPublisher) Publish(ctx context.Context, subject string, data []byte, msgID string) (*jetstream.PubAck, error) {
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	return p.js.Publish(ctx, subject, data, opts...)
}

// TestConsumerSettlesJobs: on real JetStream, a job whose run is gone is
// acknowledged; a job the registry refuses fails its run once and is
// dropped; a job that meets a registry outage is delivered again until it
// passes. Nothing is left on the work queue.
func TestConsumerSettlesJobs(t *testing.T) {
	srv := natstest.New(t)
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.CreateOrUpdateStream(t.Context(), evaljob.StreamConfig(1, time.Minute))
	require.NoError(t, err)

	var mu sync.Mutex
	calls := map[string]int{}
	var failed []string
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls[r.URL.Path]++
		switch {
		case strings.HasSuffix(r.URL.Path, "/fail"):
			b, _ := io.ReadAll(r.Body)
			failed = append(failed, r.URL.Path+" "+string(b))
			_, _ = io.WriteString(w, `{}`)
		case strings.Contains(r.URL.Path, "aaaaaaaa"): // gone
			w.WriteHeader(http.StatusNotFound)
		case strings.Contains(r.URL.Path, "bbbbbbbb"): // refused
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"detail":"no"}`)
		case r.URL.Path == "/evaluations/runs/eeeeeeee-0000-0000-0000-000000000000": // a run whose job crashes
			_, _ = io.WriteString(w, `{"count":1,"run":{"id":"eeeeeeee-0000-0000-0000-000000000000","status":"running",
				"flags":{"is_active":true},"data":{"steps":[{"key":"ts","type":"input","origin":"custom",
				"references":{"testset_revision":{"id":"0190f0a0-0000-7000-8000-000000000001"}}}]}}}`)
		case r.URL.Path == "/testsets/revisions/retrieve":
			_, _ = io.WriteString(w, `{"count":1,"testset_revision":{"id":"0190f0a0-0000-7000-8000-000000000001",
				"data":{"testcase_ids":["0190f0a0-0000-7000-8000-000000000002"]}}}`)
		case r.URL.Path == "/evaluations/scenarios/" || r.URL.Path == "/evaluations/results/":
			_, _ = io.WriteString(w, `{"count":1}`)
		case strings.Contains(r.URL.Path, "cccccccc"): // an outage, then gone
			if calls[r.URL.Path] <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer reg.Close()

	q, err := evalqueue.Open(t.Context(), js, time.Second, 5)
	require.NoError(t, err)
	c := &evalrun.Consumer{Queue: q, Jobs: 2, AckWait: time.Second, MaxDeliver: 5, RetryDelay: 100 * time.Millisecond, DrainTimeout: time.Second,
		Log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Exec: &evalrun.Executor{Client: registryclient.New(reg.URL, "tok", time.Second, 0), Worker: "w"}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	project := uuid.NewString()
	for _, run := range []string{"aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"} {
		require.NoError(t, evaljob.Publish(t.Context(), jsPublisher{js}, evaluation.Job{Kind: evaluation.KindProcess, ProjectID: project, RunID: run}))
	}
	// This executor has no job publisher: the run job's fan-out panics.
	require.NoError(t, evaljob.Publish(t.Context(), jsPublisher{js}, evaluation.Job{Kind: evaluation.KindRun, ProjectID: project,
		RunID: "eeeeeeee-0000-0000-0000-000000000000"}))
	require.Eventually(t, func() bool {
		info, err := stream.Info(t.Context())
		return err == nil && info.State.Msgs == 0
	}, 15*time.Second, 50*time.Millisecond, "every job settled")
	cancel()
	require.NoError(t, <-done)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, calls["/evaluations/runs/aaaaaaaa-0000-0000-0000-000000000000"], "acknowledged at once")
	assert.Equal(t, 1, calls["/evaluations/runs/bbbbbbbb-0000-0000-0000-000000000000"], "refused: not retried")
	assert.Equal(t, 3, calls["/evaluations/runs/cccccccc-0000-0000-0000-000000000000"], "retried through the outage")
	assert.Equal(t, 1, calls["/evaluations/runs/eeeeeeee-0000-0000-0000-000000000000"], "a crash is not retried")
	require.Len(t, failed, 2)
	sort.Strings(failed)
	assert.Contains(t, failed[0], "/internal/evaluations/runs/bbbbbbbb-0000-0000-0000-000000000000/fail")
	assert.Contains(t, failed[0], "422")
	assert.Contains(t, failed[1], "/internal/evaluations/runs/eeeeeeee-0000-0000-0000-000000000000/fail")
	assert.Contains(t, failed[1], "crashed")
}
