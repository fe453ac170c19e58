package spanmodel

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBatchInSideBySide: BatchIn normalises a request's spans in parts,
// side by side (run it with -race); the spans and rejections are the ones
// one goroutine makes. The batch has what parts share or split: resource
// maps shared by many spans and cut by the limits, parents and children in
// different parts (the roll-up), an annotation trace (its type), rejected
// spans, spans over the limits, with arenas and without.
func TestBatchInSideBySide(t *testing.T) {
	lim := Limits{MaxValueLength: 64, MaxAttributes: 8}
	raws := func() []Raw {
		resources := []map[string]any{
			{"service.name": "a", "long": strings.Repeat("r", 100)},
			{"service.name": "b"},
		}
		now := time.Unix(1_700_000_000, 0)
		var out []Raw
		for i := range 400 {
			trace := fmt.Sprintf("%032x", i%7+1)
			r := Raw{
				TraceID: trace, SpanID: fmt.Sprintf("%016x", i+1), Name: "llm", OTLP: true,
				Start: now, End: now.Add(time.Duration(i) * time.Millisecond),
				Resource: resources[(i/50)%2],
				Attributes: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": float64(i),
					"gen_ai.usage.output_tokens": 2.0, "input.value": strings.Repeat("x", i%100)},
			}
			if i >= 7 {
				r.ParentID = fmt.Sprintf("%016x", i-7+1) // the previous span of the trace, often in another part
			}
			switch {
			case i%97 == 0:
				r.SpanID = "not hex" // rejected
			case i%7 == 3:
				r.Links = []RawLink{{TraceID: fmt.Sprintf("%032x", 99), SpanID: fmt.Sprintf("%016x", 99)}}
			case i%13 == 0:
				for k := range 12 { // over MaxAttributes
					r.Attributes[fmt.Sprintf("extra.%d", k)] = k
				}
			}
			out = append(out, r)
		}
		return out
	}
	run := func(procs int, arena bool) ([]*Span, []Error, func()) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		n := &Normalizer{Limits: lim, Now: func() time.Time { return time.Unix(1_700_000_100, 0) }}
		var a *Arena
		if arena {
			a = NewArena()
		}
		spans, rejected := n.BatchIn(raws(), a)
		return spans, rejected, a.Release
	}
	one, oneRejected, release := run(1, false)
	defer release()
	require.NotEmpty(t, oneRejected)
	for _, arena := range []bool{false, true} {
		spans, rejected, release := run(4, arena)
		require.Equal(t, oneRejected, rejected)
		require.Equal(t, len(one), len(spans))
		for i := range one {
			want, got := *one[i], *spans[i]
			want.arena, got.arena = nil, nil
			require.Equal(t, want, got, "span %d (arena %v)", i, arena)
		}
		release()
	}
}
