package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// TestRegistryDeclaresEvalsAndFollowsNATS runs the registry binary: it
// declares the EVALS stream as configured, is ready only while NATS is,
// and comes back when NATS does.
func TestRegistryDeclaresEvalsAndFollowsNATS(t *testing.T) {
	ns := natstest.New(t)
	reg := svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR",
		Env: []string{"REGISTRY_INTERNAL_TOKEN=t", "REGISTRY_DEV=true", "REGISTRY_LOG_LEVEL=error",
			"REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t), "REGISTRY_NATS_URL=" + ns.URL(),
			"REGISTRY_EVALS_DEDUP_WINDOW=3m", "REGISTRY_EVAL_LIVE_INTERVAL=1s"}})

	nc, err := nats.Connect(ns.URL())
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(context.Background(), evaljob.Stream)
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
}
