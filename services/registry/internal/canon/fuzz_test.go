package canon

import (
	"encoding/json"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
)

// canonBound: parsing and both encodings allocate a few times the input.
var canonBound = fuzzbound.Bound{PerByte: 256, Fixed: 1 << 20}

// FuzzCanonical checks that parsing never panics, that the parser accepts
// exactly what encoding/json accepts, and that canonical and compact output
// are fixed points: re-parsing either yields the same canonical bytes; and
// that parsing and encoding allocate linearly in the input.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"question":"2+2?","answer":"4"}`,
		`{"b":1,"a":[1.0,1e5,-0,-0.0,1e400],"é":"😀"}`,
		`{"a":1,"a":{"c":null,"b":true}}`,
		`"\ud83d\ude00\ud800\u0000\u007f/"`,
		`[123456789012345678901234567890, 5e-324, 0.1, 1E+16]`,
		"\"\xff\xfe\"",
		`{}`, `[]`, `null`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		canonBound.Check(t, len(in), func() {
			v, err := Parse(in)
			if err == nil {
				AppendCanonical(nil, v)
				AppendCompact(nil, v)
			}
		})
		v, err := Parse(in)
		if (err == nil) != json.Valid(in) {
			t.Fatalf("Parse error %v, json.Valid %v for %q", err, json.Valid(in), in)
		}
		if err != nil {
			return
		}
		c1 := AppendCanonical(nil, v)
		v2, err := Parse(c1)
		if err != nil {
			// Only overflowing floats render as Python's non-JSON Infinity.
			if !containsInfinity(v) {
				t.Fatalf("canonical output %q does not parse: %v", c1, err)
			}
			return
		}
		if c2 := AppendCanonical(nil, v2); string(c1) != string(c2) {
			t.Fatalf("canonical not stable:\n%s\n%s", c1, c2)
		}
		compact := AppendCompact(nil, v)
		v3, err := Parse(compact)
		if err != nil {
			t.Fatalf("compact output %q does not parse: %v", compact, err)
		}
		if c3 := AppendCanonical(nil, v3); string(c1) != string(c3) {
			t.Fatalf("compact round trip changed the value:\n%s\n%s", c1, c3)
		}
	})
}

func containsInfinity(v any) bool {
	switch t := v.(type) {
	case *Object:
		for _, m := range t.Members {
			if containsInfinity(m.Value) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if containsInfinity(e) {
				return true
			}
		}
	case json.Number:
		c := string(AppendCanonical(nil, t))
		return c == "Infinity" || c == "-Infinity"
	}
	return false
}
