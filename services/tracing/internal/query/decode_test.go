package query

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func deepArray(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }

func TestMembers(t *testing.T) {
	keys, values, ok := members(` { "a" : 1 , "b\"}" : {"x":[1,"]}",{}]} ,"c":"s,}" } `)
	require.True(t, ok)
	assert.Equal(t, []string{`"a"`, `"b\"}"`, `"c"`}, keys)
	assert.Equal(t, []string{`1`, `{"x":[1,"]}",{}]}`, `"s,}"`}, values)

	_, _, ok = members(`{}`)
	assert.True(t, ok)
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":}`, `{"a":1`, `{"a":1}x`, `{"a":"x}`, `{a:1}`, `{"a":1,}`} {
		_, _, ok := members(bad)
		assert.False(t, ok, bad)
	}
}

func TestDecodeAttributes(t *testing.T) {
	attrs, marks := decodeAttributes(`{"ag":{"type":{"span":"llm"}},"n":1}`, nil)
	assert.Empty(t, marks)
	assert.Equal(t, map[string]any{"ag": map[string]any{"type": map[string]any{"span": "llm"}}, "n": 1.0}, attrs)

	// The undecodable member is found two levels down; its siblings stay.
	attrs, marks = decodeAttributes(`{"a":{"b":`+deepArray(10_001)+`,"c":2},"d":3}`, nil)
	assert.Equal(t, map[string]any{"a": map[string]any{"c": 2.0}, "d": 3.0}, attrs)
	require.Len(t, marks, 1)
	assert.Equal(t, "attributes.a.b", marks[0].Path)
	assert.Equal(t, len(deepArray(10_001)), marks[0].Bytes)
	assert.Len(t, marks[0].Raw, rawHead)
	assert.Contains(t, marks[0].Reason, "exceeded max depth")

	// Deeper than salvageDepth objects: the whole object at that level goes.
	obj := strings.Repeat(`{"o":`, 12) + deepArray(10_001) + strings.Repeat("}", 12)
	attrs, marks = decodeAttributes(obj, nil)
	require.Len(t, marks, 1)
	assert.Equal(t, "attributes"+strings.Repeat(".o", salvageDepth), marks[0].Path)
	b, err := json.Marshal(attrs)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat(`{"o":`, salvageDepth-1)+"{}"+strings.Repeat("}", salvageDepth-1), string(b), "the root and 7 levels split")

	attrs, marks = decodeAttributes(`{"ag":{"da`, nil)
	assert.Equal(t, map[string]any{}, attrs)
	require.Len(t, marks, 1)
	assert.Equal(t, Undecodable{Path: "attributes", Reason: "unexpected end of JSON input", Bytes: 10, Raw: `{"ag":{"da`}, marks[0])

	attrs, marks = decodeAttributes(`null`, nil)
	assert.Empty(t, marks)
	assert.Equal(t, map[string]any{}, attrs)
}

func TestUndecodableRawIsCutOnACharacter(t *testing.T) {
	text := strings.Repeat("a", rawHead-1) + "é" + "zz" // é straddles the cut
	u := undecodable("x", text, assert.AnError)
	assert.Equal(t, strings.Repeat("a", rawHead-1), u.Raw)
	assert.Equal(t, len(text), u.Bytes)
}

func TestDecodeRowMarksOtherParts(t *testing.T) {
	p := decodeRow(Row{Attributes: `{"ag":"not an object"}`, Events: `[{"name":"e"`, Links: `[]`, LinksSet: 1, Refs: `[` + deepArray(10_001) + `]`, Hashes: `[{"id":"h"}]`})
	assert.Empty(t, p.Events)
	assert.Empty(t, p.Refs)
	assert.Equal(t, `[]`, p.Links)
	assert.Equal(t, `[{"id":"h"}]`, p.Hashes)
	ag := p.Attrs["ag"].(map[string]any)
	un := ag["unsupported"].(map[string]any)
	assert.Equal(t, "not an object", un["_invalid"], "a non-object ag is kept, parked")
	list := un["undecodable"].([]any)
	require.Len(t, list, 2)
	assert.Equal(t, "events", list[0].(map[string]any)["path"])
	assert.Equal(t, "references", list[1].(map[string]any)["path"])
}

// FuzzDecodeRow: whatever a row's JSON columns hold, decoding never panics
// and the span renders as JSON.
func FuzzDecodeRow(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, `{"a":{"b":[1,{"c":"\"}"}]}}`, `{"a":` + deepArray(10_001) + `}`, `{"a":`, `[`, `{"ag":1}`, "{\"\xff\":1}"} {
		f.Add(seed, `[{"name":"x"}]`)
	}
	f.Fuzz(func(t *testing.T, attrs, events string) {
		p := decodeRow(Row{Attributes: attrs, Events: events})
		if _, err := json.Marshal(SpanJSON(p)); err != nil {
			t.Fatalf("render %q / %q: %v", attrs, events, err)
		}
	})
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeIsLinear: decoding a stored row costs memory in proportion to
// its size, whatever its shape: four times the input allocates about four
// times as much (a cost in the square of the depth or width would be 16).
func TestDecodeIsLinear(t *testing.T) {
	shapes := map[string]func(n int) Row{
		"deep member": func(n int) Row { return Row{Attributes: `{"ok":1,"deep":` + deepArray(n) + `}`} },
		"deep objects": func(n int) Row {
			return Row{Attributes: strings.Repeat(`{"o":`, n) + "1" + strings.Repeat("}", n)}
		},
		"wide, one bad member": func(n int) Row {
			var b strings.Builder
			b.WriteString(`{"bad":` + deepArray(10_001))
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `,"k%d":{"v":"%d"}`, i, i)
			}
			return Row{Attributes: b.String() + "}"}
		},
		"deep events": func(n int) Row { return Row{Attributes: `{}`, Events: `[{"attributes":` + deepArray(n) + `}]`} },
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			small, large := shape(20_000), shape(80_000)
			a := allocated(func() { decodeRow(small) })
			b := allocated(func() { decodeRow(large) })
			ratio := float64(b) / float64(a)
			t.Logf("%d B for %d B of input, %d B for %d B: ×%.1f", a, len(small.Attributes)+len(small.Events), b, len(large.Attributes)+len(large.Events), ratio)
			assert.Less(t, ratio, 6.0, "allocations grow faster than the input")
		})
	}
}
