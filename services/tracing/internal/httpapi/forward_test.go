package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
)

const runtimeToken = "test-runtime-token"

// runtimeBatch encodes one span of project as the runtime's recorder does
// (services/runtime/internal/traces): normalised, encoded with chspans,
// one stream message.
func runtimeBatch(t *testing.T, project, user uuid.UUID, traceID string) []byte {
	t.Helper()
	norm := &spanmodel.Normalizer{}
	now := time.Now()
	canon, rejected := norm.Batch([]spanmodel.Raw{{TraceID: traceID, SpanID: "00000000000000a1", Name: "invocation",
		Kind: "SPAN_KIND_SERVER", Start: now.Add(-time.Second), End: now, StatusCode: "STATUS_CODE_OK",
		Attributes: map[string]any{"ag": map[string]any{"type": map[string]any{"span": "workflow"}}}}})
	require.Empty(t, rejected)
	batch := &spanspb.SpanBatch{ProjectId: project.String(), ReceivedUnixNano: now.UnixNano(), UserId: user.String()}
	for _, s := range canon {
		p, _, err := chspans.Encode(s, norm.LimitsInForce(), now, user.String())
		require.NoError(t, err)
		batch.Spans = append(batch.Spans, p)
	}
	data, err := spanstream.EncodeBatch(batch)
	require.NoError(t, err)
	return data
}

func postBatch(t *testing.T, s *stack, tok string, sc scope.Scope, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+httpapi.ForwardPath, bytes.NewReader(body))
	require.NoError(t, err)
	scope.Set(req.Header, tok, sc)
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestRuntimeSpanBatches: the runtime stores its invocations' spans
// through tracing (its NATS user may not publish span batches): a batch
// it sends is stored as it came and can be read back; the gateway's token
// does not reach the route, and a batch of another project or user than
// the scope's is refused with a 400 naming the field.
func TestRuntimeSpanBatches(t *testing.T) {
	s := newStack(t, func(o *options) { o.runtimeToken = runtimeToken })
	user := uuid.New()
	sc := scope.Scope{ProjectID: s.project, UserID: user}
	traceID := "0af7651916cd43dd8448eb211c80319c"

	status, body := postBatch(t, s, token, sc, runtimeBatch(t, s.project, user, traceID))
	assert.Equal(t, http.StatusNotFound, status, "the gateway's token reached the runtime's route: %s", body)

	status, body = postBatch(t, s, runtimeToken, sc, runtimeBatch(t, uuid.New(), user, traceID))
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "project_id")

	status, body = postBatch(t, s, runtimeToken, sc, runtimeBatch(t, s.project, uuid.New(), traceID))
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "user_id")

	status, body = postBatch(t, s, runtimeToken, sc, []byte("not a batch"))
	assert.Equal(t, http.StatusBadRequest, status, body)

	stream, err := s.conn.JS.Stream(t.Context(), spanstream.SpanStream)
	require.NoError(t, err)
	info, err := stream.Info(t.Context())
	require.NoError(t, err)
	before := info.State.LastSeq
	batch := runtimeBatch(t, s.project, user, traceID)
	status, body = postBatch(t, s, runtimeToken, sc, batch)
	require.Equal(t, http.StatusNoContent, status, body)
	// The runtime sends a batch again when an answer was lost: stored once.
	status, body = postBatch(t, s, runtimeToken, sc, batch)
	require.Equal(t, http.StatusNoContent, status, body)
	info, err = stream.Info(t.Context())
	require.NoError(t, err)
	assert.Equal(t, before+1, info.State.LastSeq, "a batch sent twice is stored once")
	eventually(t, "the runtime's span stored", func() bool {
		r := s.do(t, http.MethodGet, "/spans/"+traceID+"/00000000000000a1", nil, nil)
		return r.status == http.StatusOK && r.json(t)["count"] == float64(1)
	})
}
