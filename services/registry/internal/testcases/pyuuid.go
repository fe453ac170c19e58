package testcases

import (
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ParsePythonUUID parses s the way Python's uuid.UUID(s) does, which is
// what decides whether a testcase_id or __id__ counts as an explicit UUID
// (AssignDedup). Python is laxer than uuid.Parse: it removes "urn:" and
// "uuid:" anywhere, strips braces at both ends, drops every hyphen, and then
// needs exactly 32 characters that int(x, 16) accepts — so surrounding
// whitespace, a sign, a 0x prefix and single underscores between digits are
// all allowed as long as the length is 32.
//
// One known gap: Python's int() also accepts non-ASCII decimal digits (for
// example Arabic-Indic); those are rejected here.
func ParsePythonUUID(s string) (uuid.UUID, bool) {
	var id uuid.UUID
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if utf8.RuneCountInString(s) != 32 {
		return id, false
	}
	// int(s, 16)
	s = strings.TrimFunc(s, isPySpace)
	if s != "" && s[0] == '+' { // a '-' sign cannot survive the hyphen removal
		s = s[1:]
	}
	afterPrefix := false
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
		afterPrefix = true
	}
	var digits [32]byte
	n := 0
	prevUnderscore := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			// Single underscores between digits, or right after the prefix.
			if prevUnderscore || (n == 0 && !afterPrefix) {
				return id, false
			}
			prevUnderscore = true
			continue
		}
		v, ok := hexVal(c)
		if !ok {
			return id, false
		}
		digits[n] = v
		n++
		prevUnderscore = false
	}
	if n == 0 || prevUnderscore {
		return id, false
	}
	// Right-align the n digits into 128 bits.
	var nib [32]byte
	copy(nib[32-n:], digits[:n])
	for i := range id {
		id[i] = nib[2*i]<<4 | nib[2*i+1]
	}
	return id, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// isPySpace is Python's str.isspace for one character, which int() strips.
func isPySpace(r rune) bool {
	switch {
	case r == ' ' || (r >= '\t' && r <= '\r'): // not \x1c-\x1f: int() strips only ASCII spaces and Unicode ones
		return true
	case r == 0x85 || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a):
		return true
	case r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000:
		return true
	}
	return false
}
