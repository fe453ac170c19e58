package tracewrite

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// TestOneTrace: the create/edit rule answers the trace id of one trace with
// exactly one root, and names what is wrong otherwise.
func TestOneTrace(t *testing.T) {
	const tid, other = "0af7651916cd43dd8448eb211c80319c", "1af7651916cd43dd8448eb211c80319c"
	root := spanmodel.Raw{TraceID: tid, SpanID: "b7ad6b7169203331"}
	child := spanmodel.Raw{TraceID: tid, SpanID: "c7ad6b7169203331", ParentID: "b7ad6b7169203331"}
	tests := []struct {
		name     string
		raws     []spanmodel.Raw
		pathID   string
		wantCode string // "" means the trace id is expected
	}{
		{name: "root and child", raws: []spanmodel.Raw{root, child}},
		{name: "path names the trace", raws: []spanmodel.Raw{root}, pathID: tid},
		{name: "no spans", wantCode: "tracing.missing_spans"},
		{name: "bad trace id", raws: []spanmodel.Raw{{TraceID: "xyz"}}, wantCode: "tracing.invalid_trace_id"},
		{name: "two traces", raws: []spanmodel.Raw{root, {TraceID: other, SpanID: "d7ad6b7169203331"}}, wantCode: "tracing.too_many_traces"},
		{name: "path names another trace", raws: []spanmodel.Raw{root}, pathID: other, wantCode: "tracing.trace_id_mismatch"},
		{name: "no root", raws: []spanmodel.Raw{child}, wantCode: "tracing.missing_root"},
		{name: "two roots", raws: []spanmodel.Raw{root, {TraceID: tid, SpanID: "e7ad6b7169203331"}}, wantCode: "tracing.too_many_roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := oneTrace(tt.raws, tt.pathID)
			if tt.wantCode == "" {
				require.NoError(t, err)
				assert.Equal(t, tid, id)
				return
			}
			require.Error(t, err)
			e := errs.From(err)
			assert.Equal(t, errs.Invalid, e.Kind)
			assert.Equal(t, tt.wantCode, e.Code)
		})
	}
}

// TestRejectedSpan: a span over a limit refuses its request with 413, any
// other rejection with 400 under the caller's code.
func TestRejectedSpan(t *testing.T) {
	e := errs.From(RejectedSpan(spanmodel.Error{Limit: true, Msg: "too big"}, "tracing.invalid_span", "too big"))
	assert.Equal(t, errs.TooLarge, e.Kind)
	assert.Equal(t, "tracing.span_limit", e.Code)
	e = errs.From(RejectedSpan(spanmodel.Error{Msg: "bad"}, "tracing.invalid_note", "bad"))
	assert.Equal(t, errs.Invalid, e.Kind)
	assert.Equal(t, "tracing.invalid_note", e.Code)
}
