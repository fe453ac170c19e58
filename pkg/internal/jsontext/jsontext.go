// Package jsontext writes decoded-JSON-shaped values (maps, lists, strings,
// numbers, bools, nil) as encoding/json does, without reflection. The span
// model (pkg/spanmodel: a leaf's text) and the stored-row codec (pkg/chspans:
// the attributes column) must write the same bytes, so both use it.
package jsontext

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Marshal encodes a decoded-JSON-shaped value (maps, lists, strings,
// numbers, bools, nil) exactly as encoding/json does (sorted keys, HTML
// escaping), without reflection: it is most of the CPU an ingest request
// costs. Anything else, and strings that need escaping, go through
// encoding/json.
func Marshal(v any) ([]byte, error) {
	return Append(make([]byte, 0, 512), v)
}

// Append is Marshal appending to b.
func Append(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, t)
	case bool:
		return strconv.AppendBool(b, t), nil
	case float64:
		return AppendFloat(b, t)
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case map[string]any:
		if t == nil {
			return append(b, "null"...), nil
		}
		var stack [32]string
		keys := stack[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = AppendString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = Append(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = Append(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

// AppendString writes plain printable ASCII directly; anything
// encoding/json would escape takes its path.
func AppendString(b []byte, s string) ([]byte, error) {
	b, _, err := AppendStringPlain(b, s)
	return b, err
}

// AppendStringPlain is AppendString, and whether s was all plain
// printable ASCII.
func AppendStringPlain(b []byte, s string) ([]byte, bool, error) {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			out, err := json.Marshal(s)
			if err != nil {
				return nil, false, err
			}
			return append(b, out...), false, nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true, nil
}

// plainJSON marks the bytes a JSON string holds as they are (printable
// ASCII but the quote, the backslash and encoding/json's HTML escapes).
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendFloat is encoding/json's float64 format.
func AppendFloat(b []byte, f float64) ([]byte, error) {
	// Whole numbers below 2^53 (token counts, most metrics) are their
	// integer's digits: strconv's shortest 'f' form of one is exactly that,
	// and AppendInt does without the float formatting (FuzzAppendFloat).
	if i := int64(f); float64(i) == f && i > -1<<53 && i < 1<<53 && (i != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, i, 10), nil
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return json.Marshal(f) // the same error
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
