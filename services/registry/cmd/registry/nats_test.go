package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// TestRegistryDeclaresEvalsAndFollowsNATS runs the registry binary: it
// declares the EVALS stream as configured, is ready only while NATS is,
// comes back when NATS does, and publishes a live run's jobs.
func TestRegistryDeclaresEvalsAndFollowsNATS(t *testing.T) {
	ns := natstest.New(t)
	reg := svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR",
		Env: []string{"REGISTRY_TOKEN_FROM_GATEWAY=t", "REGISTRY_TOKEN_TO_TRACING=t", "REGISTRY_DEV=true", "REGISTRY_LOG_LEVEL=error",
			"REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t), "REGISTRY_NATS_URL=" + ns.URL(),
			"REGISTRY_EVALS_DEDUP_WINDOW=3m", "REGISTRY_EVAL_LIVE_INTERVAL=1s"}})

	nc, err := nats.Connect(ns.URL())
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(context.Background(), evaluation.Stream)
	require.NoError(t, err)
	info, err := s.Info(context.Background())
	require.NoError(t, err)
	assert.Equal(t, jetstream.WorkQueuePolicy, info.Config.Retention)
	assert.Equal(t, 3*time.Minute, info.Config.Duplicates)
	nc.Close()

	ready := func() int {
		res, err := http.Get(reg.URL + "/ready")
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusOK, ready())
	ns.Shutdown()
	require.Eventually(t, func() bool { return ready() == http.StatusServiceUnavailable }, 10*time.Second, 100*time.Millisecond,
		"not ready without NATS: jobs could not be stored")
	ns.Start()
	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 15*time.Second, 100*time.Millisecond)

	// main wires the simple evaluations to the stream, and the live
	// ticker (every second here) publishes the live run's windows.
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	post := func(path string, body string) map[string]any {
		req, err := http.NewRequest("POST", reg.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, "t", sc)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %v", path, out)
		return out
	}
	revision := func(out map[string]any, key string) string { return out[key].(map[string]any)["revision_id"].(string) }
	q := revision(post("/api/simple/queries", `{"query":{"slug":"inv","data":{"filtering":{"conditions":[{"field":"trace_type","operator":"is","value":"invocation"}]}}}}`), "query")
	ev := revision(post("/api/simple/evaluators", `{"evaluator":{"slug":"exact","data":{"uri":"svc:builtin:auto_exact_match:v0","parameters":{"correct_answer_key":"a"}}}}`), "evaluator")
	run := post("/api/simple/evaluations", `{"evaluation":{"flags":{"is_live":true},"data":{"query_steps":["`+q+`"],"evaluator_steps":{"`+ev+`":"auto"}}}}`)["evaluation"].(map[string]any)["id"].(string)

	nc, err = nats.Connect(ns.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err = jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(context.Background(), evaluation.Stream)
	require.NoError(t, err)
	kinds := map[evaluation.Kind]evaluation.Job{}
	var seen uint64
	require.Eventually(t, func() bool {
		info, err := st.Info(context.Background())
		require.NoError(t, err)
		for ; seen < info.State.LastSeq; seen++ {
			msg, err := st.GetMsg(context.Background(), seen+1)
			require.NoError(t, err)
			j, err := evaluation.DecodeJob(msg.Subject, msg.Data)
			require.NoError(t, err)
			kinds[j.Kind] = j
		}
		return kinds[evaluation.KindWindow].RunID != ""
	}, 15*time.Second, 200*time.Millisecond, "the ticker publishes a window")
	assert.Equal(t, run, kinds[evaluation.KindRun].RunID, "create published the run job")
	w := kinds[evaluation.KindWindow]
	require.Equal(t, run, w.RunID, "the ticker published a window")
	assert.Equal(t, sc.UserID.String(), w.UserID)
	assert.Equal(t, time.Second, w.Newest.Sub(*w.Oldest))
}
