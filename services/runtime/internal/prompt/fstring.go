package prompt

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// renderFString follows Python's str.format for named fields: {name},
// {name[key]}, {name[0]}, {name.attr}, conversions !s/!r/!a and the common
// format specs ([[fill]align][sign][0][width][,][.precision][type] with
// type s, d, f, F, e, E, g, G, %). {{ and }} are literal braces.
// Positional fields ({} or {0}) and nested replacement fields in a spec
// are refused: a prompt has only named inputs.
//
// When lenient (strings inside response_format), a string that does not
// render is returned unchanged, since JSON Schema patterns use braces.
func renderFString(src string, ctx map[string]any, lenient bool) (string, error) {
	out, err := fstring(src, ctx)
	if err != nil && lenient {
		return src, nil
	}
	return out, err
}

func fstring(src string, ctx map[string]any) (string, error) {
	if !strings.ContainsAny(src, "{}") {
		return src, nil
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case '{':
			if i+1 < len(src) && src[i+1] == '{' {
				b.WriteByte('{')
				i += 2
				continue
			}
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return "", templateErr(FormatFString, fmt.Errorf("single '{' encountered in format string"))
			}
			field := src[i+1 : i+end]
			if strings.Contains(field, "{") {
				return "", templateErr(FormatFString, fmt.Errorf("nested replacement fields are not supported: {%s}", field))
			}
			s, err := formatField(field, ctx)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			if b.Len() > MaxOutput {
				return "", tooLarge("")
			}
			i += end + 1
		case '}':
			if i+1 < len(src) && src[i+1] == '}' {
				b.WriteByte('}')
				i += 2
				continue
			}
			return "", templateErr(FormatFString, fmt.Errorf("single '}' encountered in format string"))
		default:
			j := strings.IndexAny(src[i:], "{}")
			if j < 0 {
				j = len(src) - i
			}
			b.WriteString(src[i : i+j])
			i += j
		}
	}
	return b.String(), nil
}

// formatField renders one replacement field: name[.attr|[key]]*[!conv][:spec].
func formatField(field string, ctx map[string]any) (string, error) {
	spec := ""
	if k := strings.IndexByte(field, ':'); k >= 0 {
		field, spec = field[:k], field[k+1:]
	}
	conv := byte(0)
	if k := strings.IndexByte(field, '!'); k >= 0 {
		if len(field)-k != 2 || !strings.ContainsRune("sra", rune(field[k+1])) {
			return "", templateErr(FormatFString, fmt.Errorf("invalid conversion in {%s}", field))
		}
		conv = field[k+1]
		field = field[:k]
	}
	v, err := fieldValue(field, ctx)
	if err != nil {
		return "", err
	}
	var s string
	switch conv {
	case 'r', 'a':
		b, _ := json.Marshal(v)
		s = string(b)
	case 's':
		s = stringify(v)
	default:
		if spec != "" {
			return applySpec(v, spec)
		}
		s = stringify(v)
	}
	if spec != "" {
		return applySpec(s, spec)
	}
	return s, nil
}

// fieldValue resolves name followed by .attr and [key] accessors.
func fieldValue(field string, ctx map[string]any) (any, error) {
	end := strings.IndexAny(field, ".[")
	if end < 0 {
		end = len(field)
	}
	name := field[:end]
	if name == "" || isDigits(name) {
		return nil, templateErr(FormatFString, fmt.Errorf("positional fields are not supported: {%s}", field))
	}
	cur, ok := ctx[name]
	if !ok {
		return nil, unresolved(field)
	}
	rest := field[end:]
	for n := 0; rest != ""; n++ {
		if n >= maxPathSegments {
			return nil, unresolved(field)
		}
		var key string
		if rest[0] == '.' {
			j := strings.IndexAny(rest[1:], ".[")
			if j < 0 {
				j = len(rest) - 1
			}
			key, rest = rest[1:1+j], rest[1+j:]
			if key == "" {
				return nil, templateErr(FormatFString, fmt.Errorf("empty attribute in {%s}", field))
			}
		} else {
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return nil, templateErr(FormatFString, fmt.Errorf("missing ']' in {%s}", field))
			}
			key, rest = rest[1:j], rest[j+1:]
			if rest != "" && rest[0] != '.' && rest[0] != '[' {
				return nil, templateErr(FormatFString, fmt.Errorf("only '.' or '[' may follow ']' in {%s}", field))
			}
		}
		switch x := cur.(type) {
		case map[string]any:
			if cur, ok = x[key]; !ok {
				return nil, unresolved(field)
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return nil, unresolved(field)
			}
			cur = x[i]
		default:
			return nil, unresolved(field)
		}
	}
	return cur, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// maxWidth bounds a spec's width and precision so "{x:>999999999}" cannot
// allocate at will.
const maxWidth = 10000

// applySpec applies a Python format spec to v.
func applySpec(v any, spec string) (string, error) {
	bad := func() (string, error) {
		return "", templateErr(FormatFString, fmt.Errorf("unsupported format spec %q", spec))
	}
	var fill rune = ' '
	var align byte
	rest := spec
	if r, size := utf8.DecodeRuneInString(rest); size > 0 && len(rest) > size && strings.IndexByte("<>^=", rest[size]) >= 0 {
		fill, align, rest = r, rest[size], rest[size+1:]
	} else if len(rest) > 0 && strings.IndexByte("<>^=", rest[0]) >= 0 {
		align, rest = rest[0], rest[1:]
	}
	sign := byte('-')
	if len(rest) > 0 && strings.IndexByte("+- ", rest[0]) >= 0 {
		sign, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == '0' {
		if align == 0 {
			fill, align = '0', '='
		}
		rest = rest[1:]
	}
	width, rest := leadingInt(rest)
	comma := false
	if len(rest) > 0 && (rest[0] == ',' || rest[0] == '_') {
		comma, rest = true, rest[1:]
	}
	prec := -1
	if len(rest) > 0 && rest[0] == '.' {
		var p int
		p, rest = leadingInt(rest[1:])
		if p < 0 {
			return bad()
		}
		prec = p
	}
	if width > maxWidth || prec > maxWidth || len(rest) > 1 {
		return bad()
	}
	typ := byte(0)
	if len(rest) == 1 {
		typ = rest[0]
	}
	var s string
	num, isNum := toFloat(v)
	if _, isBool := v.(bool); isBool {
		isNum = false
	}
	switch typ {
	case 0, 's':
		if typ == 's' || !isNum {
			s = stringify(v)
			if prec >= 0 && utf8.RuneCountInString(s) > prec {
				s = string([]rune(s)[:prec])
			}
			if align == 0 {
				align = '<'
			}
			break
		}
		if prec >= 0 {
			s = strconv.FormatFloat(num, 'g', prec, 64)
		} else {
			s = stringify(v)
		}
	case 'd':
		if !isNum || num != float64(int64(num)) {
			return bad()
		}
		s = strconv.FormatInt(int64(num), 10)
	case 'f', 'F', 'e', 'E', 'g', 'G', '%':
		if !isNum {
			return bad()
		}
		if prec < 0 {
			prec = 6
			if typ == 'g' || typ == 'G' {
				prec = -1
			}
		}
		if typ == '%' {
			s = strconv.FormatFloat(num*100, 'f', prec, 64) + "%"
		} else {
			s = strconv.FormatFloat(num, typ, prec, 64)
		}
	default:
		return bad()
	}
	if isNum && typ != 's' && !(typ == 0 && !isNum) {
		if comma {
			s = groupThousands(s)
		}
		if sign != '-' && !strings.HasPrefix(s, "-") {
			s = string(sign) + s
		}
		if align == 0 {
			align = '>'
		}
	}
	n := utf8.RuneCountInString(s)
	if width <= n {
		return s, nil
	}
	pad := strings.Repeat(string(fill), width-n)
	switch align {
	case '<':
		return s + pad, nil
	case '^':
		l := (width - n) / 2
		return strings.Repeat(string(fill), l) + s + strings.Repeat(string(fill), width-n-l), nil
	case '=':
		if len(s) > 0 && (s[0] == '-' || s[0] == '+' || s[0] == ' ') {
			return s[:1] + pad + s[1:], nil
		}
		return pad + s, nil
	}
	return pad + s, nil
}

// leadingInt reads the decimal digits at the start of s (at most 9).
func leadingInt(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s
	}
	if i > 9 {
		return maxWidth + 1, s[i:]
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

// groupThousands inserts commas in the integer part of a formatted number.
func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac := s, ""
	if k := strings.IndexAny(s, ".e%"); k >= 0 {
		intPart, frac = s[:k], s[k:]
	}
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String() + frac
	if neg {
		return "-" + out
	}
	return out
}
