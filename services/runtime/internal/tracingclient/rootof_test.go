package tracingclient

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootOfATraceTree: the root is the parentless top-level node, also
// when two top-level spans share a name (a list).
func TestRootOfATraceTree(t *testing.T) {
	root, ok := rootOf(json.RawMessage(`{"orphan":{"trace_id":"t","span_id":"b","parent_id":"x"},
		"app":[{"trace_id":"t","span_id":"c","parent_id":"y"},{"trace_id":"t","span_id":"a","attributes":{"ag":{"data":{"outputs":"hi"}}},"spans":{"chat":{"span_id":"d"}}}]}`))
	require.True(t, ok)
	assert.Equal(t, "a", root.SpanID)
	assert.Equal(t, "hi", root.Ag("data", "outputs"))
	_, ok = rootOf(json.RawMessage(`{}`))
	assert.False(t, ok)
}
