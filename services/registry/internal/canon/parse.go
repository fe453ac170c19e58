package canon

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting like encoding/json does, so that the two accept
// exactly the same documents and a hostile file cannot exhaust the stack.
const maxDepth = 10000

// SyntaxError describes malformed JSON. Offset is the byte offset of the
// problem in the parsed input.
type SyntaxError struct {
	Offset int64
	Msg    string
}

// Error returns the message with its offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset)
}

// Parse parses one JSON value (with optional surrounding whitespace) into a
// value tree. Numbers keep their literal, objects keep member order, and
// invalid UTF-8 or lone surrogates become U+FFFD as with encoding/json.
func Parse(b []byte) (any, error) {
	p := parser{b: b}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.b) {
		return nil, p.errorf("invalid character %s after top-level value", quoteChar(p.b[p.i]))
	}
	return v, nil
}

// ParseObject parses b, which must hold exactly one JSON object.
func ParseObject(b []byte) (*Object, error) {
	p := parser{b: b}
	p.skipSpace()
	if p.i >= len(p.b) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	if p.b[p.i] != '{' {
		return nil, p.errorf("expected a JSON object")
	}
	v, err := Parse(b)
	if err != nil {
		return nil, err
	}
	return v.(*Object), nil
}

// Decode reads the next JSON value from dec — a whole document, or the next
// value inside an array or object being walked with dec.Token — into a value
// tree. It reads the raw bytes of the value, so number literals survive
// whether or not dec.UseNumber was called.
func Decode(dec *json.Decoder) (any, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	return Parse(raw)
}

func isNull(b []byte) bool {
	p := parser{b: b}
	p.skipSpace()
	if len(b)-p.i < 4 || string(b[p.i:p.i+4]) != "null" {
		return false
	}
	p.i += 4
	p.skipSpace()
	return p.i == len(b)
}

type parser struct {
	b []byte
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: int64(p.i), Msg: fmt.Sprintf(format, args...)}
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (p *parser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.i >= len(p.b) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %s looking for beginning of value", quoteChar(c))
	}
}

func (p *parser) literal(lit string) error {
	for k := 0; k < len(lit); k++ {
		if p.i >= len(p.b) {
			return p.errorf("unexpected end of JSON input")
		}
		if p.b[p.i] != lit[k] {
			return p.errorf("invalid character %s in literal %s", quoteChar(p.b[p.i]), lit)
		}
		p.i++
	}
	return nil
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("exceeded max depth")
	}
	p.i++ // '{'
	o := &Object{}
	var idx map[string]int // built only for wide objects, see below
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		o.Members = []Member{}
		return o, nil
	}
	for {
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end of JSON input")
		}
		if p.b[p.i] != '"' {
			return nil, p.errorf("invalid character %s looking for beginning of object key string", quoteChar(p.b[p.i]))
		}
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end of JSON input")
		}
		if p.b[p.i] != ':' {
			return nil, p.errorf("invalid character %s after object key", quoteChar(p.b[p.i]))
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		// Duplicate keys follow Python's dict: first position, last value.
		// Small objects scan; wide ones switch to a map to stay linear.
		pos := -1
		if idx != nil {
			if j, ok := idx[key]; ok {
				pos = j
			}
		} else {
			pos = o.index(key)
		}
		if pos >= 0 {
			o.Members[pos].Value = v
		} else {
			o.Members = append(o.Members, Member{Key: key, Value: v})
			if idx != nil {
				idx[key] = len(o.Members) - 1
			} else if len(o.Members) > 32 {
				idx = make(map[string]int, 2*len(o.Members))
				for j, m := range o.Members {
					idx[m.Key] = j
				}
			}
		}
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end of JSON input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			return o, nil
		default:
			return nil, p.errorf("invalid character %s after object key:value pair", quoteChar(p.b[p.i]))
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("exceeded max depth")
	}
	p.i++ // '['
	a := []any{}
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end of JSON input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.errorf("invalid character %s after array element", quoteChar(p.b[p.i]))
		}
	}
}

// number scans the RFC 8259 number grammar and keeps the literal.
func (p *parser) number() (any, error) {
	start := p.i
	b := p.b
	if b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(b) && b[p.i] >= '0' && b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(b) && b[p.i] == '0':
		p.i++
	case p.i < len(b) && b[p.i] >= '1' && b[p.i] <= '9':
		digits()
	case p.i >= len(b):
		return nil, p.errorf("unexpected end of JSON input")
	default:
		return nil, p.errorf("invalid character %s in numeric literal", quoteChar(b[p.i]))
	}
	if p.i < len(b) && b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			if p.i >= len(b) {
				return nil, p.errorf("unexpected end of JSON input")
			}
			return nil, p.errorf("invalid character %s after decimal point in numeric literal", quoteChar(b[p.i]))
		}
	}
	if p.i < len(b) && (b[p.i] == 'e' || b[p.i] == 'E') {
		p.i++
		if p.i < len(b) && (b[p.i] == '+' || b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			if p.i >= len(b) {
				return nil, p.errorf("unexpected end of JSON input")
			}
			return nil, p.errorf("invalid character %s in exponent of numeric literal", quoteChar(b[p.i]))
		}
	}
	return json.Number(b[start:p.i]), nil
}

// string scans a JSON string starting at its opening quote. The common case
// (no escapes, valid UTF-8) costs one allocation for the result.
func (p *parser) string() (string, error) {
	p.i++ // opening quote
	start := p.i
	b := p.b
	for p.i < len(b) {
		c := b[p.i]
		switch {
		case c == '"':
			s := string(b[start:p.i])
			p.i++
			return s, nil
		case c == '\\':
			return p.slowString(start)
		case c < 0x20:
			return "", p.errorf("invalid character %s in string literal", quoteChar(c))
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(b[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.slowString(start)
			}
			p.i += size
		}
	}
	return "", p.errorf("unexpected end of JSON input")
}

// slowString decodes a string with escapes or invalid UTF-8 from start,
// with encoding/json's replacements so both decoders agree.
func (p *parser) slowString(start int) (string, error) {
	b := p.b
	out := make([]byte, 0, p.i-start+16)
	out = append(out, b[start:p.i]...)
	for p.i < len(b) {
		c := b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("invalid character %s in string literal", quoteChar(c))
		case c == '\\':
			p.i++
			if p.i >= len(b) {
				return "", p.errorf("unexpected end of JSON input")
			}
			e := b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by an escaped low one is a
					// pair; anything else is U+FFFD, as in encoding/json.
					r2 := rune(-1)
					if p.i+1 < len(b) && b[p.i] == '\\' && b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						var err error
						if r2, err = p.hex4(); err != nil {
							return "", err
						}
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
						} else {
							p.i = save // re-read the second escape on its own
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				p.i--
				return "", p.errorf("invalid character %s in string escape code", quoteChar(e))
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(b[p.i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, b[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", p.errorf("unexpected end of JSON input")
}

func (p *parser) hex4() (rune, error) {
	var r rune
	for k := 0; k < 4; k++ {
		if p.i >= len(p.b) {
			return 0, p.errorf("unexpected end of JSON input")
		}
		c := p.b[p.i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, p.errorf("invalid character %s in \\u hexadecimal character escape", quoteChar(c))
		}
		r = r<<4 | rune(c)
		p.i++
	}
	return r, nil
}
