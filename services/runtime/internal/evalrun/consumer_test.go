package evalrun

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
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/runtime/internal/evalclient"
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

	c := &Consumer{JS: js, Jobs: 2, AckWait: time.Second, MaxDeliver: 5, RetryDelay: 100 * time.Millisecond, DrainTimeout: time.Second,
		Log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Exec: &Executor{Client: evalclient.New(reg.URL, "tok", reg.URL, "tok", time.Second), Worker: "w"}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	project := uuid.NewString()
	for _, run := range []string{"aaaaaaaa-0000-0000-0000-000000000000", "bbbbbbbb-0000-0000-0000-000000000000", "cccccccc-0000-0000-0000-000000000000"} {
		require.NoError(t, evaljob.Publish(t.Context(), jsPublisher{js}, evaljob.Job{Kind: evaljob.KindProcess, ProjectID: project, RunID: run}))
	}
	// This executor has no job publisher: the run job's fan-out panics.
	require.NoError(t, evaljob.Publish(t.Context(), jsPublisher{js}, evaljob.Job{Kind: evaljob.KindRun, ProjectID: project,
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

// TestSchedIsFairBetweenProjectsAndRuns: within a project, the run with
// fewer jobs running goes first; the last free slot is kept for a project
// running nothing, so another project's job starts at once behind a
// queued flood; a project never runs more than its cap.
func TestSchedIsFairBetweenProjectsAndRuns(t *testing.T) {
	add := func(q *sched, project, run string) {
		q.add(&waitingJob{job: evaljob.Job{ProjectID: project, RunID: run}})
	}
	startAll := func(q *sched) []string {
		var out []string
		for w := q.next(); w != nil; w = q.next() {
			out = append(out, w.job.ProjectID+"/"+w.job.RunID)
		}
		return out
	}
	q := &sched{jobs: 4, keep: true, byProject: map[string]int{}, byRun: map[string]int{}}
	for range 3 {
		add(q, "flood", "f1")
	}
	add(q, "flood", "f2")
	// f1 (the oldest), f2 (its run runs nothing), f1; the fourth slot
	// waits for a project running nothing.
	assert.Equal(t, []string{"flood/f1", "flood/f2", "flood/f1"}, startAll(q))
	add(q, "small", "s1")
	assert.Equal(t, []string{"small/s1"}, startAll(q), "the kept slot")
	assert.Empty(t, startAll(q), "every slot busy")
	// A flood job ends: its free slot is again the last one, kept for a
	// project running nothing; another one comes and takes it.
	q.done(&waitingJob{job: evaljob.Job{ProjectID: "flood", RunID: "f1"}})
	assert.Empty(t, startAll(q))
	add(q, "other", "o1")
	assert.Equal(t, []string{"other/o1"}, startAll(q))

	// A cap of 1 per project: two projects' floods take one slot each.
	q = &sched{jobs: 4, perProject: 1, keep: true, byProject: map[string]int{}, byRun: map[string]int{}}
	for range 3 {
		add(q, "a", "a1")
		add(q, "b", "b1")
	}
	assert.Equal(t, []string{"a/a1", "b/b1"}, startAll(q))
	add(q, "c", "c1")
	add(q, "d", "d1")
	assert.Equal(t, []string{"c/c1", "d/d1"}, startAll(q), "projects running nothing start")

	// Without a lookahead (keep false): first in, first out on every slot.
	q = &sched{jobs: 2, byProject: map[string]int{}, byRun: map[string]int{}}
	add(q, "a", "a1")
	add(q, "a", "a1")
	add(q, "b", "b1")
	assert.Equal(t, []string{"a/a1", "b/b1"}, startAll(q))
}
