package jsontext

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshalJSONMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, "", "plain", `quote " and \ backslash`, "<html> & co", "tab\tnew\nline\x01", "héllo ✓", "\u2028", string([]byte{0xff, 'a'}),
		true, false, 0.0, 1.0, -1.5, 1e-7, 1e21, 123456789.125, 1e20, 5e-324, math.MaxFloat64, int64(-42), 7,
		math.Copysign(0, -1), 120.0, -40.0, float64(1 << 53), float64(1<<53 - 1), float64(-(1<<53 - 1)), float64(1<<53 + 2), 1e15, 12345678901234567890.0,
		[]any{}, []any{nil, "a", 1.0, map[string]any{}}, map[string]any{},
		map[string]any{"b": 1.0, "a": []any{"x", map[string]any{"z": nil, "y": true}}, "<": "&", "é": "ü"},
		[]string{"typed", "slice"}, map[string]string{"k": "v"},
	}
	for _, v := range values {
		want, werr := json.Marshal(v)
		got, gerr := Marshal(v)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Errorf("%#v: got %s (%v), want %s (%v)", v, got, gerr, want, werr)
		}
	}
	if _, err := Marshal(map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN must fail as in encoding/json")
	}
}

func FuzzMarshalJSON(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x<y"],"b":{"c":null,"d":true,"e":1e-9}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		want, _ := json.Marshal(v)
		got, _ := Marshal(v)
		if string(got) != string(want) {
			t.Fatalf("got %s want %s", got, want)
		}
	})
}

// FuzzAppendFloat: any float64 is written as encoding/json writes it (the
// whole-number fast path included), or refused as it refuses it.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 120, 1 << 53, 1<<53 - 1, 1<<53 + 1, -(1 << 53), 1e21, 1e-7, 0.5, math.Inf(1), math.NaN()} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		want, werr := json.Marshal(v)
		got, gerr := AppendFloat([]byte("x"), v)
		if (werr != nil) != (gerr != nil) || werr == nil && string(got) != "x"+string(want) {
			t.Fatalf("%v (%#x): got %s (%v), want %s (%v)", v, bits, got, gerr, want, werr)
		}
	})
}
