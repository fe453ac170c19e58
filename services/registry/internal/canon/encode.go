package canon

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// asciiSafe marks the bytes Python's ensure_ascii encoder copies verbatim:
// printable ASCII except the quote and the backslash.
var asciiSafe = func() (t [256]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendCompact appends v as compact JSON in its own member order. Strings
// keep their UTF-8 (no \u escapes, no HTML escaping); invalid UTF-8 becomes
// \ufffd. Numbers are written as their literal. Values of other Go types are
// normalised as described on AppendCanonical.
func AppendCompact(dst []byte, v any) []byte {
	return appendValue(dst, v, false)
}

// AppendCanonical appends v exactly as Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
// renders the value Python's json.loads would have produced from the same
// input. This is the byte string testcase ids are hashed over, so it must
// not drift:
//   - object keys sorted by code point (byte order of UTF-8 strings);
//   - everything outside printable ASCII escaped as \uXXXX in lowercase hex,
//     with surrogate pairs above the BMP, and \n \r \t \b \f \" \\ short forms;
//     "/" is not escaped;
//   - integer literals printed like a Python int ("-0" becomes "0");
//   - literals with '.', 'e' or 'E' printed like a Python float repr
//     ("1.0", "1e-05", "1e+16"; overflow gives "Infinity").
//
// Besides the value tree types, it accepts Object (non-pointer), float64 and
// float32 (as Python floats), Go integers, and any other value encoding/json
// can marshal (re-parsed first, so maps come out sorted). A json.Number that
// is not a valid JSON number, or a value that cannot be marshalled, is
// written as null rather than producing invalid output.
func AppendCanonical(dst []byte, v any) []byte {
	return appendValue(dst, v, true)
}

func appendValue(dst []byte, v any, canonical bool) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case *Object:
		if t == nil {
			return append(dst, "null"...)
		}
		return appendObject(dst, t, canonical)
	case Object:
		return appendObject(dst, &t, canonical)
	case []any:
		if t == nil {
			return append(dst, "null"...)
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e, canonical)
		}
		return append(dst, ']')
	case string:
		if canonical {
			return appendASCIIString(dst, t)
		}
		return appendUTF8String(dst, t)
	case json.Number:
		return appendNumber(dst, string(t), canonical)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case float64:
		return appendFloat(dst, t)
	case float32:
		return appendFloat(dst, float64(t))
	case int:
		return strconv.AppendInt(dst, int64(t), 10)
	case int64:
		return strconv.AppendInt(dst, t, 10)
	case int32:
		return strconv.AppendInt(dst, int64(t), 10)
	case uint64:
		return strconv.AppendUint(dst, t, 10)
	case uint:
		return strconv.AppendUint(dst, uint64(t), 10)
	default:
		return appendForeign(dst, v, canonical)
	}
}

// appendForeign handles values outside the tree (maps, structs, typed
// slices) by marshalling and re-parsing them: slow, but only a fallback.
func appendForeign(dst []byte, v any, canonical bool) []byte {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return append(dst, "null"...)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	tree, err := Parse(b)
	if err != nil {
		return append(dst, "null"...)
	}
	return appendValue(dst, tree, canonical)
}

func appendObject(dst []byte, o *Object, canonical bool) []byte {
	ms := o.Members
	if canonical && !isSorted(ms) {
		// Typical rows have a few keys: sort a copy on the stack.
		var stack [16]Member
		ms = sortMembers(append(stack[:0], ms...))
	}
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		if canonical {
			dst = appendASCIIString(dst, m.Key)
		} else {
			dst = appendUTF8String(dst, m.Key)
		}
		dst = append(dst, ':')
		dst = appendValue(dst, m.Value, canonical)
	}
	return append(dst, '}')
}

func isSorted(ms []Member) bool {
	for i := 1; i < len(ms); i++ {
		if ms[i-1].Key >= ms[i].Key {
			return false
		}
	}
	return true
}

// sortMembers sorts ms by key in place and returns it without duplicate
// keys. Go compares strings bytewise, and bytewise order of UTF-8 is code
// point order, which is how Python sorts str. A Python dict cannot hold a
// key twice, so duplicates that code appended by hand collapse to the last
// value (the sort is stable).
func sortMembers(ms []Member) []Member {
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ { // insertion sort: stable, no allocation
			for j := i; j > 0 && ms[j].Key < ms[j-1].Key; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
	} else {
		slices.SortStableFunc(ms, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	}
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].Key == m.Key {
			continue // a later duplicate wins
		}
		out = append(out, m)
	}
	return out
}

// appendUTF8String writes s keeping UTF-8, escaping only what JSON requires.
func appendUTF8String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendASCIIString writes s like Python's ensure_ascii encoder: only the
// printable ASCII range ' '..'~' stays literal (so DEL is \u007f).
func appendASCIIString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if asciiSafe[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		if c < utf8.RuneSelf {
			dst = appendEscape(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		// Invalid bytes decode to U+FFFD with size 1, which matches what
		// the parsers of this package store for them.
		if r > 0xFFFF {
			r -= 0x10000
			dst = appendU4(dst, 0xD800+(r>>10))
			dst = appendU4(dst, 0xDC00+(r&0x3FF))
		} else {
			dst = appendU4(dst, r)
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	default:
		return appendU4(dst, rune(c))
	}
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// appendNumber writes a number literal. Compact output keeps it verbatim;
// canonical output reproduces Python's int/float distinction.
func appendNumber(dst []byte, lit string, canonical bool) []byte {
	isFloat, ok := classifyNumber(lit)
	if !ok {
		return append(dst, "null"...)
	}
	if !canonical {
		return append(dst, lit...)
	}
	if !isFloat {
		// Python's int() of a JSON integer literal prints the same digits;
		// the only literal it changes is negative zero.
		if lit == "-0" {
			return append(dst, '0')
		}
		return append(dst, lit...)
	}
	f, _ := strconv.ParseFloat(lit, 64) // range errors give ±Inf, as Python's float()
	return appendFloat(dst, f)
}

// classifyNumber validates the JSON number grammar and reports whether the
// literal is a float in Python's eyes (has a fraction or an exponent).
func classifyNumber(s string) (isFloat, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false, false
	}
	if i < len(s) && s[i] == '.' {
		isFloat = true
		i++
		n := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == n {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isFloat = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		n := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == n {
			return false, false
		}
	}
	return isFloat, i == len(s)
}

// appendFloat writes f like Python's float.__repr__: the shortest digits
// that round-trip, positional when the decimal exponent is in [-4, 16),
// scientific otherwise with a signed exponent of at least two digits.
// Python's json module writes infinities as Infinity/-Infinity and NaN as
// NaN (not valid JSON, but that is what gets hashed).
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	var buf [32]byte
	// 'e' with -1 precision gives the shortest round-trip digits as
	// "[-]d[.ddd]e±XX", which is then re-laid out Python's way.
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	ePos := 0
	for ePos < len(s) && s[ePos] != 'e' {
		ePos++
	}
	mant, expPart := s[:ePos], s[ePos+1:]
	exp, _ := strconv.Atoi(string(expPart))
	var digits [24]byte
	nd := 0
	for _, c := range mant {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	d := digits[:nd]

	if exp < -4 || exp >= 16 {
		dst = append(dst, d[0])
		if len(d) > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	// exp in [0, 16): integer part has exp+1 digits, padded with zeros.
	intLen := exp + 1
	if len(d) <= intLen {
		dst = append(dst, d...)
		for k := len(d); k < intLen; k++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	}
	dst = append(dst, d[:intLen]...)
	dst = append(dst, '.')
	return append(dst, d[intLen:]...)
}
