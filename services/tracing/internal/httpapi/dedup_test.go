package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func streamMsgs(t *testing.T, s *stack) uint64 {
	t.Helper()
	st, err := s.conn.JS.Stream(t.Context(), "SPANS")
	require.NoError(t, err)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	return info.State.Msgs
}

// A retry is stored once, but the same body sent again after a delete of
// the project's trace is a new message.
func TestResendAfterDeleteIsNotARetry(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	body := protoBody(t, otlpTraces([16]byte{9}, 2, nil))
	native := []byte(`{"spans":[{"trace_id":"cccccccccccccccccccccccccccccc01","span_id":"c000000000000001","span_name":"r"}]}`)
	post := func() {
		r := s.do(t, "POST", "/api/otlp/v1/traces", body, map[string]string{"Content-Type": "application/x-protobuf"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		r = s.do(t, "POST", "/api/tracing/spans/ingest", native, nil)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	}
	post()
	post()
	assert.Equal(t, uint64(2), streamMsgs(t, s), "retries are stored once")
	r := s.do(t, "DELETE", "/api/tracing/traces/cccccccccccccccccccccccccccccc01", nil, nil)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	post()
	assert.Equal(t, uint64(4), streamMsgs(t, s), "after a delete, the same bodies are new messages")
	post()
	assert.Equal(t, uint64(4), streamMsgs(t, s), "and their retries are again stored once")
}

// POST, DELETE, POST of the same trace within the dedup window: the trace
// is there at the end, exactly once.
func TestPostDeletePostKeepsTheTrace(t *testing.T) {
	s := newStack(t)
	const tid = "dddddddddddddddddddddddddddddd01"
	body := []byte(`{"spans":[{"trace_id":"` + tid + `","span_id":"d000000000000001","span_name":"root"},` +
		`{"trace_id":"` + tid + `","span_id":"d000000000000002","parent_id":"d000000000000001","span_name":"child"}]}`)
	count := func() float64 {
		return s.do(t, "GET", "/api/spans/?trace_id="+tid, nil, nil).json(t)["count"].(float64)
	}

	r := s.do(t, "POST", "/api/tracing/spans/ingest", body, nil)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "the trace stored", func() bool { return count() == 2 })
	r = s.do(t, "DELETE", "/api/tracing/traces/"+tid, nil, nil)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "the trace deleted", func() bool { return count() == 0 })
	r = s.do(t, "POST", "/api/tracing/spans/ingest", body, nil)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "the trace stored again", func() bool { return count() == 2 })
}
