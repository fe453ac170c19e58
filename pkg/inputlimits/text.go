// Package inputlimits holds, in one place, the checks every request input
// passes before it is stored: text PostgreSQL can store (no NUL, valid
// UTF-8, no unpaired surrogate escape) and JSON whose nesting depth and
// number lengths every client can read back. A refusal is a 422 naming the
// value's location. It imports no HTTP framework, so the use cases and the
// wire decoding that call it stay free of one; pkg/httpx's BindText is the
// echo side.
package inputlimits

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/errs"
)

// Text that PostgreSQL cannot store: a text or jsonb value refuses NUL
// (SQLSTATE 22021, and 22P05 for the \u0000 escape in jsonb), bytes that
// are not UTF-8 (22021) and, in jsonb, an unpaired UTF-16 surrogate escape
// (22P02). encoding/json repairs the last two into U+FFFD when it decodes
// a string, but raw JSON kept as json.RawMessage reaches the database
// unrepaired, so the checks run on the request bytes.
const (
	msgNUL       = "Input should not contain NUL characters (\\u0000)"
	msgUTF8      = "Input should be valid UTF-8"
	msgSurrogate = "Input should not contain unpaired UTF-16 surrogates (\\ud800-\\udfff)"
)

// CheckText refuses a NUL character or invalid UTF-8 in s with a 422
// naming loc, e.g. ("query", "name"). For values that do not come from a
// JSON body: query parameters, form fields, headers.
func CheckText(s string, loc ...any) error {
	switch {
	case !utf8.ValidString(s):
		return errs.Field(msgUTF8, nil, loc...)
	case bytes.IndexByte([]byte(s), 0) >= 0:
		return errs.Field(msgNUL, nil, loc...)
	}
	return nil
}

// CheckJSONText finds, in one linear pass, the first string of the JSON
// document raw (object keys included) that holds a NUL character, invalid
// UTF-8 or an unpaired surrogate escape, and returns a 422 whose location
// is loc followed by the string's path (["body", "testset", "name"]).
// skip, when set, is asked for each value's path (only its tail should be
// looked at: the call must be O(1)) and exempts the subtree, for values
// stored where these are fine. Documents without a suspicious byte cost
// one scan and no allocation. raw must be valid JSON (decode it first);
// on anything else the check gives up and returns nil.
func CheckJSONText(raw []byte, skip func(path []any) bool, loc ...any) error {
	if utf8.Valid(raw) && !suspiciousEscape(raw) {
		return nil
	}
	w := textWalker{b: raw, skip: skip}
	if msg := w.walk(); msg != "" {
		return errs.Field(msg, nil, append(append([]any{}, loc...), w.path...)...)
	}
	return nil
}

// suspiciousEscape reports a \u0000 or a \ud800-\udfff escape anywhere
// (a false alarm on "\\u0000" only costs the full walk).
func suspiciousEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 || i+6 > len(b) {
			return false
		}
		if h := b[i+2 : i+6]; string(h) == "0000" || (h[0] == 'd' || h[0] == 'D') && bytes.IndexByte([]byte("89abcdefABCDEF"), h[1]) >= 0 {
			return true
		}
		b = b[i+2:]
	}
}

// textWalker is an iterative JSON scanner that keeps the path of the value
// it is in (object keys and array indexes), so nesting depth costs no
// recursion.
type textWalker struct {
	b    []byte
	i    int
	path []any
	// inObj[d] tells whether the container at depth d is an object.
	inObj []bool
	// skipped is the depth at which an exempt subtree began (0: none).
	skipped int
	skip    func([]any) bool
	// limits makes walk report depth and number lengths past the JSON
	// limits (CheckJSONLimits) instead of text problems.
	limits bool
	// keys and indexes are boxed once each, so that a long or deep
	// document walks without an allocation per member.
	keys    map[string]any
	indexes []any
}

func (w *textWalker) key(quoted []byte) any {
	if k, ok := w.keys[string(quoted)]; ok {
		return k
	}
	if w.keys == nil {
		w.keys = map[string]any{}
	}
	k := any(key(quoted))
	w.keys[string(quoted)] = k
	return k
}

func (w *textWalker) index(i int) any {
	for len(w.indexes) <= i {
		w.indexes = append(w.indexes, len(w.indexes))
	}
	return w.indexes[i]
}

// walk returns the problem found ("" if none); w.path is then its location.
func (w *textWalker) walk() string {
	expectKey := false
	for w.i < len(w.b) {
		c := w.b[w.i]
		switch c {
		case ' ', '\t', '\n', '\r', ':':
			w.i++
		case '{', '[':
			if w.limits && len(w.inObj) >= MaxJSONDepth {
				return msgDepth
			}
			w.enter(c == '{')
			expectKey = c == '{'
			w.i++
		case '}', ']':
			w.leave()
			expectKey = false // after an empty object, the next string is a value
			w.i++
		case ',':
			d := len(w.inObj) - 1
			if d < 0 {
				return ""
			}
			if w.inObj[d] {
				expectKey = true
			} else {
				w.path[d] = w.index(w.path[d].(int) + 1)
				w.checkSkip()
			}
			w.i++
		case '"':
			start := w.i + 1
			msg, end := w.str(start)
			if end < 0 {
				return ""
			}
			if w.limits {
				msg = ""
			}
			if expectKey {
				d := len(w.inObj)
				if d == 0 {
					return "" // not JSON: a key outside any object
				}
				w.path[d-1] = w.key(w.b[start-1 : end+1])
				expectKey = false
				// A key belongs to its object: exempt only inside an
				// exempt value, whatever its own value turns out to be.
				if msg != "" && (w.skipped == 0 || w.skipped >= d) {
					return msg
				}
				w.checkSkip()
			} else if msg != "" && w.skipped == 0 {
				return msg
			}
			w.i = end + 1
		default: // numbers, true, false, null
			if w.limits && numberByte(c) {
				n := 0
				for w.i < len(w.b) && numberByte(w.b[w.i]) {
					w.i++
					n++
				}
				if n > MaxJSONNumberLength {
					return msgNumber
				}
				continue
			}
			w.i++
		}
	}
	return ""
}

func (w *textWalker) enter(obj bool) {
	w.inObj = append(w.inObj, obj)
	if obj {
		w.path = append(w.path, "")
	} else {
		w.path = append(w.path, w.index(0))
		w.checkSkip()
	}
}

func (w *textWalker) leave() {
	if len(w.inObj) == 0 {
		return
	}
	if w.skipped == len(w.inObj) {
		w.skipped = 0
	}
	w.inObj, w.path = w.inObj[:len(w.inObj)-1], w.path[:len(w.path)-1]
	if w.skipped > len(w.inObj) {
		w.skipped = 0
	}
}

// checkSkip asks skip about the value at the current path; a subtree it
// exempts ends when the container holding that value is left (the exempt
// value may be a scalar, in which case the next key or index re-asks).
func (w *textWalker) checkSkip() {
	if w.skip == nil {
		return
	}
	d := len(w.inObj)
	if w.skipped != 0 && w.skipped < d {
		return // inside an exempt subtree already
	}
	if w.skip(w.path) {
		w.skipped = d
	} else if w.skipped == d {
		w.skipped = 0
	}
}

// str scans the string starting at b[start] (after the quote) and returns
// its first problem and the index of the closing quote (-1 if none).
func (w *textWalker) str(start int) (msg string, end int) {
	b := w.b
	for i := start; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return msg, i
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				if !ok {
					return msg, -1
				}
				i += 6
				switch {
				case r == 0:
					msg = first(msg, msgNUL)
				case utf16.IsSurrogate(r):
					low, ok := hex4(b, i+2)
					if r < 0xdc00 && ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' && low >= 0xdc00 && low <= 0xdfff {
						i += 6 // a valid pair
					} else {
						msg = first(msg, msgSurrogate)
					}
				}
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				msg = first(msg, msgUTF8)
			}
			i += size
		}
	}
	return msg, -1
}

// key decodes a quoted object key for a location, cut to 64 bytes.
func key(quoted []byte) string {
	var k string
	_ = json.Unmarshal(quoted, &k)
	if len(k) > 64 {
		k = strings.ToValidUTF8(k[:64], "")
	}
	return k
}

func first(have, next string) string {
	if have != "" {
		return have
	}
	return next
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}

// Limits on the shape of stored JSON. Values past them are legal JSON, but
// every Python client that lists a project holding one breaks: Python's
// json refuses integers of more than 4,300 digits (ValueError) and a value
// nested about 1,000 deep exhausts its recursion limit. Far below both,
// they never refuse what the compatible platform's clients send (their documents
// nest a dozen levels; a float's repr is at most 24 characters).
const (
	// MaxJSONDepth is the deepest nesting of objects and arrays in a body,
	// the body's own object counting as the first level.
	MaxJSONDepth = 128
	// MaxJSONNumberLength is the longest number literal, in characters
	// (sign, digits, fraction and exponent).
	MaxJSONNumberLength = 300
)

// CheckJSONLimits refuses, with a 422 naming the value's location after
// loc, a JSON document nested deeper than MaxJSONDepth or holding a number
// literal longer than MaxJSONNumberLength. One scan and no allocation when
// the document is within them; raw must be valid JSON (decode it first).
func CheckJSONLimits(raw []byte, loc ...any) error {
	if shapeWithin(raw) {
		return nil
	}
	w := textWalker{b: raw, limits: true}
	msg := w.walk()
	if msg == "" {
		return nil
	}
	path := w.path
	if len(path) > 16 { // a location as deep as the document says nothing more
		path = path[:16]
	}
	return errs.Field(msg, nil, append(append([]any{}, loc...), path...)...)
}

var (
	msgDepth  = "Input should not be nested deeper than " + strconv.Itoa(MaxJSONDepth) + " levels of objects and arrays"
	msgNumber = "Input should be a number of at most " + strconv.Itoa(MaxJSONNumberLength) + " characters"
)

// shapeWithin is CheckJSONLimits' fast path: depth and number lengths,
// skipping strings.
func shapeWithin(b []byte) bool {
	depth, run := 0, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			run = 0
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '{' || c == '[':
			run = 0
			if depth++; depth > MaxJSONDepth {
				return false
			}
		case c == '}' || c == ']':
			run = 0
			depth--
		case numberByte(c):
			if run++; run > MaxJSONNumberLength {
				return false
			}
		default:
			run = 0
		}
	}
	return true
}

func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
