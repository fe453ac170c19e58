package evaluators

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The compatible platform's evaluators are Python: they turn a non-string
// output into text with json.dumps and compare values with ==. The helpers
// here reproduce both on decoded JSON values (nil, bool, float64 or
// json.Number, string, []any, map[string]any) so that a score computed here
// equals the one computed there on the same data.
//
// One difference cannot be helped: a Go map has no key order, so objects are
// dumped with sorted keys where Python keeps insertion order. An object
// output given with its keys already sorted dumps to the same text.

// text is the evaluated value as the Python evaluators see it: a string as
// is, anything else json.dumps'ed.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyDumps(v)
}

// pyDumps is Python's json.dumps(v, sort_keys=True): separators ", " and
// ": ", non-ASCII escaped as \uXXXX, floats as repr.
func pyDumps(v any) string {
	var b bytes.Buffer
	appendPy(&b, v)
	return b.String()
}

func appendPy(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		appendPyString(b, x)
	case float64:
		b.WriteString(pyFloat(x))
	case json.Number:
		if isIntLiteral(string(x)) {
			b.WriteString(string(x))
		} else if f, err := x.Float64(); err == nil {
			b.WriteString(pyRepr(f))
		} else {
			b.WriteString(string(x))
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			appendPy(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			appendPyString(b, k)
			b.WriteString(": ")
			appendPy(b, x[k])
		}
		b.WriteByte('}')
	default:
		// Another Go type (a caller's struct or typed slice): its JSON
		// form, decoded, is what Python would have received.
		raw, err := json.Marshal(x)
		if err != nil {
			b.WriteString("null")
			return
		}
		var back any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&back) != nil {
			b.WriteString("null")
			return
		}
		appendPy(b, back)
	}
}

// appendPyString writes s as json.dumps does with ensure_ascii: the short
// escapes for \" \\ \n \r \t \b \f, every other character outside ' '..'~'
// as \uxxxx (lowercase hex), astral characters as a surrogate pair.
func appendPyString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	u4 := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(hex[r>>12&0xf])
		b.WriteByte(hex[r>>8&0xf])
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= ' ' && r <= '~':
			b.WriteByte(byte(r))
		case r > 0xffff:
			r -= 0x10000
			u4(0xd800 + (r>>10)&0x3ff)
			u4(0xdc00 + r&0x3ff)
		default:
			u4(r)
		}
	}
	b.WriteByte('"')
}

// pyFloat is Python's repr of a float, except that an integral value prints
// as an int: JSON decoding cannot tell 1 from 1.0, and integers are what
// JSON documents hold far more often.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == math.Trunc(f) && math.Abs(f) < 1e16:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return pyRepr(f)
}

// pyRepr is Python's repr of a finite float: 1.0, 0.0001, 1e-05, 1e+16.
func pyRepr(f float64) string {
	// repr: the shortest round-tripping digits, positional when the
	// exponent is in [-4, 16), else d.ddde+XX.
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde±XX"
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	es := strconv.Itoa(exp)
	if len(es) < 2 {
		es = "0" + es
	}
	return mant + "e" + sign + es
}

func isIntLiteral(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".eE")
}

// toFloat converts a decoded JSON number; booleans are not numbers here.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// pyNumber is toFloat plus Python's bool-is-an-int: True == 1.
func pyNumber(v any) (float64, bool) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, true
		}
		return 0, true
	}
	return toFloat(v)
}

// pyEqual is Python's == on decoded JSON values: numbers and booleans
// compare numerically (True == 1 == 1.0), containers element by element.
func pyEqual(a, b any) bool {
	if fa, ok := pyNumber(a); ok {
		fb, ok := pyNumber(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !pyEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// pyType is the name of type(v) in Python for a decoded JSON value. An
// integral float64 counts as int, since JSON decoding into float64 cannot
// tell 1 from 1.0 (a json.Number can, and is honoured).
func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "int"
		}
		return "float"
	case json.Number:
		if isIntLiteral(string(x)) {
			return "int"
		}
		return "float"
	case int, int64:
		return "int"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return "object"
}

// parseJSON decodes s as Python's json.loads would accept it, keeping
// numbers as json.Number so ints and floats stay apart. NaN and Infinity,
// which Python accepts, are not JSON here.
func parseJSON(s string) (any, bool) {
	if !utf8.ValidString(s) || !json.Valid([]byte(s)) {
		return nil, false
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}
