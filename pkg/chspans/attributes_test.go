package chspans

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
)

func checkEncodeAttributes(t *testing.T, m map[string]any) {
	t.Helper()
	want, werr := json.Marshal(m)
	wk, wv := spanmodel.Flatten(m)
	got, gk, gv, gerr := encodeAttributes(m, nil)
	for i, v := range wv {
		wv[i] = unmark(v)
	}
	// A long leaf repeated is a pointer to its first copy: resolve them.
	for i, v := range gv {
		if strings.HasPrefix(v, PointerMark) {
			j, err := strconv.Atoi(v[len(PointerMark):])
			if err != nil || j < 1 || j > i || len(gv[j-1]) <= LongLeaf || strings.HasPrefix(gv[j-1], PointerMark) {
				t.Fatalf("%v: bad pointer %q at %d", m, v, i)
			}
			gv[i] = gv[j-1]
		}
	}
	if werr != nil || gerr != nil {
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%v: errors differ: %v / %v", m, werr, gerr)
		}
		return
	}
	got = []byte(ExpandAttributes(string(got)))
	if string(got) != string(want) && strings.Contains(string(got), `"\uffff\u0000@`) {
		// A real string that starts like a pointer has its U+FFFF escaped:
		// other bytes, the same value.
		var g, w any
		if json.Unmarshal(got, &g) == nil && json.Unmarshal(want, &w) == nil && reflect.DeepEqual(g, w) {
			got = want
		}
	}
	if string(got) != string(want) || !slices.Equal(gk, wk) || !slices.Equal(gv, wv) {
		t.Fatalf("%v:\n got %s %q %q\nwant %s %q %q", m, got, gk, gv, want, wk, wv)
	}
}

func TestEncodeAttributesIsMarshalAndFlatten(t *testing.T) {
	checkEncodeAttributes(t, map[string]any{})
	long := strings.Repeat("long ", 60)
	checkEncodeAttributes(t, map[string]any{"a": long, "b": map[string]any{"c": long, "d": []any{long, "short"}}, "e": PointerMark + "1", "f": []any{long, "short"}})
	checkEncodeAttributes(t, map[string]any{"a": long, "b": long, "c": map[string]any{"d": long, "e": "\uffff\x00@1\"x", "f": "\uffff\x00@0\"" + long}, "g": []any{long}})
	js, _, _, _ := encodeAttributes(map[string]any{"a": long, "b": long, "c": "\uffff\x00@1"}, nil)
	if len(js) > len(long)+100 || !strings.Contains(string(js), `"c":"\uffff\u0000@1"`) {
		t.Fatalf("js %s", js)
	}
	_, _, values, _ := encodeAttributes(map[string]any{"a": long, "b": long, "c": PointerMark + "1"}, nil)
	if !slices.Equal(values, []string{long, PointerMark + "1", "\ufffd\x001"}) {
		t.Fatalf("values %q", values)
	}
	checkEncodeAttributes(t, map[string]any{"ag": map[string]any{"data": map[string]any{"inputs": []any{map[string]any{"role": "user", "n": 1e22}, "x", nil, []any{true}}},
		"metrics": map[string]any{"tokens": 12.5, "empty": map[string]any{}, "list": []any{}}}, "k<": "v&", "int": int64(3), "nil": nil})
}

// FuzzEncodeAttributes: the one-pass encoder equals json.Marshal plus
// Flatten, and allocates linearly in the attributes' JSON.
func FuzzEncodeAttributes(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x<y",{"b":[null]}],"b":{"c":null,"d":true,"e":1e-9},"":{"":1}}`)
	f.Add(`{"deep":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,"map":` + strings.Repeat(`{"k":`, 40) + "1" + strings.Repeat("}", 40) + `}`)
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		encodeBound.Check(t, len(s), func() { _, _, _, _ = encodeAttributes(m, nil) })
		checkEncodeAttributes(t, m)
	})
}

// encodeBound: the JSON, keys and values of a span's attributes are a few
// times its JSON text; work quadratic in the nesting depth crosses it.
var encodeBound = fuzzbound.Bound{PerByte: 512, Fixed: 1 << 20}
