package chspans

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
)

func checkEncodeAttributes(t *testing.T, m map[string]any) {
	t.Helper()
	want, werr := json.Marshal(m)
	wk, wv := spanmodel.Flatten(m)
	got, gk, gv, gerr := encodeAttributes(m, nil)
	for i, v := range wv {
		wv[i] = strings.ToValidUTF8(unmark(v), "\uFFFD") // protobuf strings are UTF-8
	}
	stored := slices.Clone(gv)
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
	checkTextOnce(t, got)
	got = []byte(ExpandAttributes(string(got), stored))
	if string(got) != string(want) && strings.Contains(string(got), `\uffff\u0000`) {
		// A real string or key that starts like a pointer has its U+FFFF
		// escaped: other bytes, the same value.
		var g, w any
		if json.Unmarshal(got, &g) == nil && json.Unmarshal(want, &w) == nil && reflect.DeepEqual(g, w) {
			got = want
		}
	}
	if string(got) != string(want) || !slices.Equal(gk, wk) || !slices.Equal(gv, wv) {
		t.Fatalf("%v:\n got %s %q %q\nwant %s %q %q", m, got, gk, gv, want, wk, wv)
	}
}

// checkTextOnce: the stored JSON holds no long text outside lists (a long
// list is a pointer too), but for the strings attr_values keeps otherwise
// (starting with PointerMark, or not UTF-8: repaired to U+FFFD).
func checkTextOnce(t *testing.T, js []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("stored JSON %.200q: %v", js, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			if b, _ := json.Marshal(v); len(b) > LongLeaf {
				t.Fatalf("a long list in the stored JSON: %.200s", b)
			}
		case string:
			if len(v) > LongLeaf && !strings.HasPrefix(v, PointerMark) && !strings.ContainsRune(v, utf8.RuneError) {
				t.Fatalf("a long string in the stored JSON: %.200q", v)
			}
		}
	}
	walk(v)
}

func TestEncodeAttributesIsMarshalAndFlatten(t *testing.T) {
	checkEncodeAttributes(t, map[string]any{})
	long := strings.Repeat("long ", 60)
	checkEncodeAttributes(t, map[string]any{"a": long, "b": map[string]any{"c": long, "d": []any{long, "short"}}, "e": PointerMark + "1", "f": []any{long, "short"}})
	checkEncodeAttributes(t, map[string]any{"a": long, "b": long, "c": map[string]any{"d": long, "e": "\uffff\x00@1\"x", "f": "\uffff\x00@0\"" + long}, "g": []any{long}})
	js, _, _, _ := encodeAttributes(map[string]any{"a": long, "b": long, "c": "\uffff\x00@1"}, nil)
	if string(js) != `{"a":`+jsonMark+`#1","b":`+jsonMark+`#1","c":"\uffff\u0000@1"}` {
		t.Fatalf("js %s", js)
	}
	_, _, values, _ := encodeAttributes(map[string]any{"a": long, "b": long, "c": PointerMark + "1"}, nil)
	if !slices.Equal(values, []string{long, PointerMark + "1", "\ufffd\x001"}) {
		t.Fatalf("values %q", values)
	}
	checkEncodeAttributes(t, map[string]any{"ag": map[string]any{"data": map[string]any{"inputs": []any{map[string]any{"role": "user", "n": 1e22}, "x", nil, []any{true}}},
		"metrics": map[string]any{"tokens": 12.5, "empty": map[string]any{}, "list": []any{}}}, "k<": "v&", "int": int64(3), "nil": nil})
}

// TestLongTextStoredOnce: a long string or list outside a list is a
// pointer into attr_values in the JSON, and reads back as it was: repeated,
// with NULs and quotes, starting with U+FFFF (then kept in full, escaped),
// not UTF-8, a list of numbers (whose leaves viewed the bytes the pointer
// replaces), lists in lists, and keys that look like pointers.
func TestLongTextStoredOnce(t *testing.T) {
	long := strings.Repeat("long ", 60)
	nums := make([]any, 100)
	for i := range nums {
		nums[i] = float64(i) + 0.5
	}
	for _, m := range []map[string]any{
		{"a": long, "b": long, "c": map[string]any{"d": long + "x", "e": long}},
		{"nul": long + "\x00 \"quoted\" <html> & \n" + long, "short": "a\x00b"},
		{"ff": "\uffff" + long, "mark": PointerMark + long, "hash": PointerMark + "#1" + long, "list": PointerMark + "[1", "at": PointerMark + "@0"},
		{"\uffff\x00#1": long, "\uffff\x00[1": "short", "\uffff\x00@0": []any{long}},
		{"bad": long + "\xff\xfe" + long, "ok": long},
		{"nums": nums, "after": 1.5, "before": map[string]any{"n": 2.5, "list": nums}},
		{"msgs": []any{map[string]any{"role": "user", "content": long}, map[string]any{"role": "assistant", "content": long, "n": 3.25}}, "input": long},
		{"nested": []any{[]any{long, 1.5}, []any{2.5}}, "same": []any{[]any{long, 1.5}, []any{2.5}}},
		{"short": []any{"a", 1.5}, "a": []any{long}, "b": []any{long}, "c": long},
		{"quoted": "x\"\uffff\x00#1", "in list": []any{"\"\uffff\x00[1"}, "c": long},
	} {
		checkEncodeAttributes(t, m)
	}
	js, _, values, _ := encodeAttributes(map[string]any{"a": long, "b": []any{long, 1.5}, "c": long}, nil)
	if string(js) != `{"a":`+jsonMark+`#1","b":`+jsonMark+`[2","c":`+jsonMark+`#1"}` ||
		!slices.Equal(values, []string{long, `["` + long + `",1.5]`, PointerMark + "1", "1.5", PointerMark + "1"}) {
		t.Fatalf("js %s, values %q", js, values)
	}
}

// TestExpandAttributesReadsEveryForm: rows written before long text moved
// to attr_values (full JSON, @ pointers to an earlier token) read as they
// did, with or without their values; a pointer that names nothing, and a
// key that looks like one, are left as they are.
func TestExpandAttributesReadsEveryForm(t *testing.T) {
	long := strings.Repeat("x", 300)
	values := []string{long, PointerMark + "1", `["` + long + `"]`, "short", PointerMark + "2"}
	for _, c := range []struct {
		name, js, want string
		values         []string
	}{
		{"no pointer", `{"a":"b"}`, `{"a":"b"}`, nil},
		{"old row: @", `{"a":"` + long + `","b":` + jsonMark + `@5"}`, `{"a":"` + long + `","b":"` + long + `"}`, nil},
		{"old row: @ with values", `{"a":"` + long + `","b":` + jsonMark + `@5"}`, `{"a":"` + long + `","b":"` + long + `"}`, values},
		{"old row: @ to no token", `{"a":1,"b":` + jsonMark + `@4"}`, `{"a":1,"b":` + jsonMark + `@4"}`, nil},
		{"#", `{"a":` + jsonMark + `#1"}`, `{"a":"` + long + `"}`, values},
		{"# through a pointer", `{"a":` + jsonMark + `#2"}`, `{"a":"` + long + `"}`, values},
		{"[", `{"a":` + jsonMark + `[3","b":1}`, `{"a":["` + long + `"],"b":1}`, values},
		{"# without values", `{"a":` + jsonMark + `#1"}`, `{"a":` + jsonMark + `#1"}`, nil},
		{"# out of range", `{"a":` + jsonMark + `#6","b":` + jsonMark + `#0","c":` + jsonMark + `#x"}`, `{"a":` + jsonMark + `#6","b":` + jsonMark + `#0","c":` + jsonMark + `#x"}`, values},
		{"# to a pointer to a pointer", `{"a":` + jsonMark + `#5"}`, `{"a":` + jsonMark + `#5"}`, append(slices.Clone(values), PointerMark+"5")[:5]},
		{"[ to a text", `{"a":` + jsonMark + `[4"}`, `{"a":` + jsonMark + `[4"}`, values},
		{"a key", `{` + jsonMark + `#1":` + jsonMark + `#4",` + jsonMark + `@1":1}`, `{` + jsonMark + `#1":"short",` + jsonMark + `@1":1}`, values},
		{"within a string", `{"a":"x\` + jsonMark + `#1","b":["\` + jsonMark + `[3"]}`, `{"a":"x\` + jsonMark + `#1","b":["\` + jsonMark + `[3"]}`, values},
		{"unknown form", `{"a":` + jsonMark + `!1"}`, `{"a":` + jsonMark + `!1"}`, values},
		{"cut", `{"a":` + jsonMark + `#1`, `{"a":` + jsonMark + `#1`, values},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ExpandAttributes(c.js, c.values); got != c.want {
				t.Fatalf("got  %.120q\nwant %.120q", got, c.want)
			}
		})
	}
}

// FuzzExpandAttributes: whatever a row holds, ExpandAttributes answers,
// in memory linear in what it writes (the JSON, and a value's text per
// pointer), and a JSON without a pointer is returned as it is.
func FuzzExpandAttributes(f *testing.F) {
	f.Add(`{"a":`+jsonMark+`#1","b":`+jsonMark+`[2","c":`+jsonMark+`@0"}`, strings.Repeat("x", 300), `[1,`+jsonMark+`#1"]`)
	f.Add(jsonMark+`#2":`+jsonMark+`#1`, PointerMark+"2", PointerMark+"1")
	f.Fuzz(func(t *testing.T, js, v1, v2 string) {
		values := []string{v1, v2, v1}
		var got string
		out := len(js) + (strings.Count(js, jsonMark)+1)*(len(v1)+len(v2))
		expandBound.Check(t, out, func() { got = ExpandAttributes(js, values) })
		if !strings.Contains(js, jsonMark) && got != js {
			t.Fatalf("changed without a pointer: %q -> %q", js, got)
		}
	})
}

// expandBound: the answer, with room for the buffer's growth and a
// string's escapes (up to six bytes per byte).
var expandBound = fuzzbound.Bound{PerByte: 32, Fixed: 1 << 20}

// FuzzEncodeAttributes: the one-pass encoder equals json.Marshal plus
// Flatten, and allocates linearly in the attributes' JSON.
func FuzzEncodeAttributes(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x<y",{"b":[null]}],"b":{"c":null,"d":true,"e":1e-9},"":{"":1}}`)
	f.Add(`{"a":"` + strings.Repeat("long ", 60) + `","b":[` + strings.Repeat("1.5,", 70) + `2],"c":{"d":"` + strings.Repeat("long ", 60) + `"}}`)
	f.Add(`{"\uffff\u0000#1":"\uffff\u0000[1` + strings.Repeat("x", 300) + `","l":[[` + strings.Repeat(`"y",`, 100) + `1]]}`)
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
