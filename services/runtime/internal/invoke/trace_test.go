package invoke_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// spans records what an invocation would publish.
type spans struct {
	mu  sync.Mutex
	got [][]invoke.Span
}

func (s *spans) Record(_ context.Context, _ scope.Scope, sp []invoke.Span) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, sp)
	return nil
}

func echoCall(traceID string) invoke.Call {
	return invoke.Call{Scope: scope.Scope{ProjectID: uuid.New()}, Key: "mock", TraceID: traceID,
		Req: invoke.Request{Data: invoke.CallData{Parameters: map[string]any{"key": "echo"}, Inputs: map[string]any{"q": "x"}}}}
}

// TestDeterministicTraceIDs: a call that names its trace id answers and
// records exactly that trace with the derived root span id, twice the
// same, so a re-executed evaluation cell rewrites its spans.
func TestDeterministicTraceIDs(t *testing.T) {
	rec := &spans{}
	svc := &invoke.Service{Recorder: rec}
	const trace = "0123456789abcdef0123456789abcdef"
	for range 2 {
		out := svc.Invoke(t.Context(), echoCall(trace))
		require.NoError(t, out.Err)
		assert.Equal(t, trace, out.Response.TraceID)
		assert.Equal(t, invoke.SpanID(trace, 0), out.Response.SpanID)
		assert.True(t, out.Traced)
	}
	require.Len(t, rec.got, 2)
	assert.Equal(t, rec.got[0][0].TraceID, rec.got[1][0].TraceID)
	assert.Equal(t, rec.got[0][0].SpanID, rec.got[1][0].SpanID)
	assert.Len(t, invoke.SpanID(trace, 0), 16)
	assert.NotEqual(t, invoke.SpanID(trace, 0), invoke.SpanID(trace, 1), "ordinals give distinct spans")
	assert.NotEqual(t, invoke.SpanID(trace, 0), invoke.SpanID("fedcba9876543210fedcba9876543210", 0))
}

// TestRandomTraceIDsByDefault: without a trace id, every call is a new
// trace with a new root span, as before.
func TestRandomTraceIDsByDefault(t *testing.T) {
	rec := &spans{}
	svc := &invoke.Service{Recorder: rec}
	a := svc.Invoke(t.Context(), echoCall(""))
	b := svc.Invoke(t.Context(), echoCall(""))
	require.NoError(t, a.Err)
	require.NoError(t, b.Err)
	assert.Len(t, a.Response.TraceID, 32)
	assert.NotEqual(t, a.Response.TraceID, b.Response.TraceID)
	assert.NotEqual(t, a.Response.SpanID, b.Response.SpanID)
	assert.NotEqual(t, invoke.SpanID(a.Response.TraceID, 0), a.Response.SpanID)
}

// TestRefusedCallIsNotTraced: a call refused before its handler ran
// records nothing and says so.
func TestRefusedCallIsNotTraced(t *testing.T) {
	rec := &spans{}
	svc := &invoke.Service{Recorder: rec}
	call := echoCall("0123456789abcdef0123456789abcdef")
	call.Key = "no-such-handler"
	out := svc.Invoke(t.Context(), call)
	require.Error(t, out.Err)
	assert.False(t, out.Traced)
	assert.Empty(t, rec.got)
}
