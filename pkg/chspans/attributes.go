package chspans

// The stored-attribute codec: how a span's attributes become the
// attributes, attr_keys and attr_values columns, and how a reader gets the
// JSON back (ExpandAttributes).

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/assayhq/assay/pkg/internal/jsontext"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Errors of encodeAttributes under limits: errOverLimit means the tree must
// be trimmed first, errTooBig that the span encodes to more than MaxBytes.
var (
	errOverLimit = errors.New("attributes over the span limits")
	errTooBig    = errors.New("attributes over the span size limit")
)

// encodeAttributes is jsontext.Marshal(m) and spanmodel.Flatten(m) in one walk: the list
// leaves' text is their JSON, which is already in the buffer. With lim, it
// stops at the first value over a limit (errOverLimit) and once the output
// passes lim.MaxBytes (errTooBig): the walk is then bounded whatever m is.
func encodeAttributes(m map[string]any, lim *spanmodel.Limits) (js []byte, keys, values []string, err error) {
	// Sized like the previous span's (spans of a load are alike): one
	// allocation instead of a few growths and copies. Capped, so that one
	// outlier costs its own request only.
	buf, leaves := int(attrBufHint.Load()), int(attrLeavesHint.Load())
	sc := encScratches.Get().(*encScratch)
	e := flatEncoder{lim: lim, buf: make([]byte, 0, max(1024, buf+buf/8)), values: make([]string, 0, max(8, leaves)),
		keyEnds: sc.keyEnds[:0], arena: sc.arena[:0], path: sc.path[:0], long: sc.long[:0]}
	if err := e.value(m); err != nil {
		sc.put(&e)
		return nil, nil, nil, err
	}
	// The keys are cut from one string: one allocation for all of them.
	all := string(e.arena)
	e.keys = make([]string, len(e.keyEnds))
	from := 0
	for i, end := range e.keyEnds {
		e.keys[i] = all[from:end]
		from = end
	}
	sc.put(&e)
	attrBufHint.Store(int64(min(len(e.buf), maxBufHint)))
	attrLeavesHint.Store(int64(min(len(e.keys), maxLeavesHint)))
	return e.buf, e.keys, e.values, nil
}

// encScratch is an encoder's working memory, which nothing it returns
// points into (the keys are copied out of arena): the next span's encoder
// reuses it, instead of allocating and growing five slices per span.
type encScratch struct {
	path, arena   []byte
	keyEnds, long []int
}

var encScratches = sync.Pool{New: func() any {
	return &encScratch{path: make([]byte, 0, 128), arena: make([]byte, 0, 1024), keyEnds: make([]int, 0, 64)}
}}

// put returns e's working memory to the pool, unless one outlier span
// grew it past the hints' caps (it is then left to the collector).
func (sc *encScratch) put(e *flatEncoder) {
	if cap(e.arena) > maxBufHint || cap(e.keyEnds) > maxLeavesHint || cap(e.path) > maxBufHint ||
		cap(e.long) > maxLeavesHint {
		return
	}
	sc.path, sc.arena, sc.keyEnds, sc.long = e.path[:0], e.arena[:0], e.keyEnds[:0], e.long[:0]
	e.path, e.arena, e.keyEnds, e.long = nil, nil, nil, nil
	encScratches.Put(sc)
}

// attrBufHint and attrLeavesHint are the previous span's
// sizes, capped: a hint only saves the growth steps of spans alike, and an
// uncapped one made every span after one huge span allocate as much.
var attrBufHint, attrLeavesHint atomic.Int64

const (
	maxBufHint    = 64 << 10
	maxLeavesHint = 1024
)

type flatEncoder struct {
	lim          *spanmodel.Limits // nil: no limits
	depth        int               // path segments down to the value at hand
	size         int               // bytes of the leaf values so far
	buf          []byte
	path         []byte // the current leaf's dotted key
	arena        []byte // the keys so far, one after another
	keyEnds      []int  // where each key ends in arena
	keys, values []string
	long         []int // the indexes in values of the long leaves kept
	inList       int
}

// LongLeaf is the length above which a leaf's text is stored only once,
// in attr_values (docs/decisions/0012-span-text-stored-once.md): the
// attributes JSON holds a pointer to it, and a later leaf with the same
// text (the OpenInference input.value and its copy parked under
// ag.unsupported.data.inputs, say) stores PointerMark + the 1-based index
// of the first one instead.
const LongLeaf = 256

// PointerMark starts a pointer in attr_values: the noncharacter U+FFFF and
// a NUL (protobuf strings must be valid UTF-8). A real leaf text that starts
// with it has that U+FFFF stored as U+FFFD in attr_values (the JSON column
// keeps it), so no real text looks like a pointer.
const PointerMark = "\uffff\x00"

// jsonMark starts every pointer token of the attributes JSON, a member's
// value: a quote, the raw U+FFFF and an escaped NUL. encoding/json writes
// U+FFFF raw, and the encoder escapes it in a real string or key that
// starts with PointerMark (the same value), so only pointers hold these
// bytes after a colon (within a string they can follow an escaped quote).
// The byte after it is the pointer's form:
//
//	#n  the string whose text is attr_values[n-1] (a long string leaf)
//	[n  the list whose JSON is attr_values[n-1] (a list's leaf text is its JSON)
//	@n  the string token at byte n of the JSON (an earlier copy of a long
//	    string): written before long text moved to attr_values, still read
//
// Inside a list the JSON holds everything (the list's leaf text is that
// JSON); a long list outside one is a [ pointer.
const (
	jsonMark       = "\"\uffff\\u0000"
	jsonMarkString = '#'
	jsonMarkList   = '['
	jsonMarkOffset = '@'
)

// ExpandAttributes is the stored attributes JSON with every pointer replaced
// by what it stands for, the JSON as encoding/json writes it. values is the
// row's attr_values, where the long texts are: it may be nil for a row
// without pointers into it (one written before they existed, or without
// long text). A pointer that names nothing is left as it is (a string).
func ExpandAttributes(js string, values []string) string {
	i := strings.Index(js, jsonMark)
	if i < 0 {
		return js
	}
	n := len(js)
	for _, v := range values {
		if len(v) > LongLeaf {
			n += len(v) + len(v)/8
		}
	}
	b := make([]byte, 0, n)
	from := 0
	for i >= 0 {
		i += from
		j := i + len(jsonMark)
		end := strings.IndexByte(js[j:], '"')
		if end < 0 {
			break
		}
		end += j // the closing quote
		b = append(b, js[from:i]...)
		ok := false
		// A pointer is a member's value, right after its colon: not a
		// key, and not a quote escaped inside a string.
		if i > 0 && js[i-1] == ':' {
			b, ok = expandPointer(b, js, i, j, end, values)
		}
		if !ok {
			b = append(b, js[i:end+1]...) // not ours: as it is
		}
		from = end + 1
		i = strings.Index(js[from:], jsonMark)
	}
	b = append(b, js[from:]...)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// expandPointer appends what the pointer token js[i:end+1] (its form at
// js[j]) stands for to b, or says it names nothing (b unchanged).
func expandPointer(b []byte, js string, i, j, end int, values []string) ([]byte, bool) {
	if j == end {
		return b, false
	}
	n, err := strconv.Atoi(js[j+1 : end])
	if err != nil || n < 1 {
		return b, false
	}
	switch js[j] {
	case jsonMarkOffset:
		tok := ""
		if n < i {
			tok = stringToken(js, n)
		}
		if tok == "" {
			return b, false
		}
		return append(b, tok...), true
	case jsonMarkString, jsonMarkList:
		text, ok := valueText(values, n)
		if !ok {
			return b, false
		}
		if js[j] == jsonMarkList {
			if !strings.HasPrefix(text, "[") {
				return b, false
			}
			return append(b, text...), true
		}
		if out, err := jsontext.AppendString(b, text); err == nil {
			return out, true
		}
	}
	return b, false
}

// valueText is the text at the 1-based index n of values, through one
// pointer (a pointer names a text, never another pointer).
func valueText(values []string, n int) (string, bool) {
	if n > len(values) {
		return "", false
	}
	v := values[n-1]
	if !strings.HasPrefix(v, PointerMark) {
		return v, true
	}
	k, err := strconv.Atoi(v[len(PointerMark):])
	if err != nil || k < 1 || k > len(values) || strings.HasPrefix(values[k-1], PointerMark) {
		return "", false
	}
	return values[k-1], true
}

// stringToken is the JSON string token at js[off:], or "".
func stringToken(js string, off int) string {
	if js[off] != '"' {
		return ""
	}
	for j := off + 1; j < len(js); j++ {
		switch js[j] {
		case '\\':
			j++
		case '"':
			return js[off : j+1]
		}
	}
	return ""
}

// unmark is text safe from being read as a pointer.
func unmark(text string) string {
	if strings.HasPrefix(text, PointerMark) {
		return "\ufffd" + text[len("\uffff"):]
	}
	return text
}

func (e *flatEncoder) leaf(text string) error {
	_, err := e.push(text)
	return err
}

// push adds the leaf text at the current path, and says where its text is
// kept (its own index in values, or that of its first copy).
func (e *flatEncoder) push(text string) (int, error) {
	text = unmark(text)
	e.arena = append(e.arena, e.path...)
	e.keyEnds, e.values = append(e.keyEnds, len(e.arena)), append(e.values, text)
	i := len(e.values) - 1
	return e.dedupe(i), e.check(len(e.values[i]))
}

// check accounts n more bytes of leaf values and says whether the
// attributes are still within the limits.
func (e *flatEncoder) check(n int) error {
	if e.lim == nil {
		return nil
	}
	e.size += n
	switch {
	case len(e.keyEnds) > e.lim.MaxAttributes || len(e.path) > e.lim.MaxKeyLength:
		return errOverLimit
	case len(e.buf)+len(e.arena)+e.size > e.lim.MaxBytes:
		return errTooBig
	}
	return nil
}

// tooDeep says whether a container of n elements at the current depth
// nests deeper than the limit.
func (e *flatEncoder) tooDeep(n int) bool {
	return e.lim != nil && n > 0 && e.depth >= e.lim.MaxDepth
}

// dedupe turns values[i] into a pointer when it is long and an earlier
// leaf has the same text, and answers the index of the text: i, or the
// earlier leaf's.
func (e *flatEncoder) dedupe(i int) int {
	text := e.values[i]
	if len(text) <= LongLeaf {
		return i
	}
	// A span has few long leaves: a scan (length first) beats hashing them.
	for _, j := range e.long {
		if e.values[j] == text {
			e.values[i] = PointerMark + strconv.Itoa(j+1)
			return j
		}
	}
	e.long = append(e.long, i)
	return i
}

// appendPointer writes the JSON pointer token of the given form to the
// text at index i of values.
func (e *flatEncoder) appendPointer(form byte, i int) {
	e.buf = append(append(e.buf, jsonMark...), form)
	e.buf = strconv.AppendInt(e.buf, int64(i+1), 10)
	e.buf = append(e.buf, '"')
}

// rebase points the leaves of values from index from on that are views of
// e.buf[start:] (numbers: see value) into text, a copy of those bytes,
// which are about to be overwritten.
func (e *flatEncoder) rebase(from, start int, text string) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(e.buf)))
	lo, hi := base+uintptr(start), base+uintptr(len(e.buf))
	for j := from; j < len(e.values); j++ {
		v := e.values[j]
		if v == "" {
			continue
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(v))); p >= lo && p < hi {
			off := int(p - lo)
			e.values[j] = text[off : off+len(v)]
		}
	}
}

// entry is one key and value of an object.
type entry struct {
	k string
	v any
}

// sortEntries sorts es by key: by insertion for the few keys of most
// objects (no comparison function called per step), by the library's
// sort beyond, so the cost stays n log n.
func sortEntries(es []entry) {
	if len(es) > 12 {
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].k < es[j-1].k; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

func (e *flatEncoder) value(v any) error {
	var err error
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		if e.tooDeep(len(t)) {
			return errOverLimit
		}
		// The entries, not only the keys, are sorted (on the stack for
		// objects of up to 32 keys): no map lookup per key afterwards.
		var stack [32]entry
		entries := stack[:0]
		for k, v := range t {
			entries = append(entries, entry{k, v})
		}
		sortEntries(entries)
		e.buf = append(e.buf, '{')
		e.depth++
		for i, en := range entries {
			k := en.k
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if strings.HasPrefix(k, PointerMark) {
				e.buf, err = appendMarked(e.buf, k)
			} else {
				e.buf, err = jsontext.AppendString(e.buf, k)
			}
			if err != nil {
				return err
			}
			e.buf = append(e.buf, ':')
			n := len(e.path)
			if n > 0 {
				e.path = append(e.path, '.')
			}
			e.path = append(e.path, k...)
			err := e.value(en.v)
			e.path = e.path[:n]
			if err != nil {
				return err
			}
		}
		e.depth--
		e.buf = append(e.buf, '}')
	case []any:
		if e.tooDeep(len(t)) {
			return errOverLimit
		}
		start, idx := len(e.buf), len(e.values)
		if err := e.leaf(""); err != nil {
			return err
		}
		// A list's leaf text is its JSON: no JSON pointers inside. (Not
		// a deferred decrement: a function with a defer pays for it on
		// every return, and value returns once per leaf.)
		e.inList++
		err := e.list(t)
		e.inList--
		if err != nil {
			return err
		}
		text := string(e.buf[start:])
		e.values[idx] = text
		if e.inList > 0 || len(text) <= LongLeaf {
			e.dedupe(idx)
			return e.check(len(text))
		}
		// A long list outside a list: its text is kept in values
		// only, the JSON points to it.
		e.rebase(idx+1, start, text)
		at := e.dedupe(idx)
		e.buf = e.buf[:start]
		e.appendPointer(jsonMarkList, at)
		return e.check(len(e.values[idx]))
	case string:
		if e.lim != nil && len(t) > e.lim.MaxValueLength {
			return errOverLimit
		}
		if e.inList == 0 && len(t) > LongLeaf && !strings.HasPrefix(t, PointerMark) && utf8.ValidString(t) {
			// A long string outside a list: its text is kept in values
			// only, the JSON points to it (ExpandAttributes puts it
			// back). Text that values keeps otherwise (not UTF-8, or
			// starting like a pointer) is written in full.
			at, err := e.push(t)
			e.appendPointer(jsonMarkString, at)
			return err
		}
		plain := false
		if strings.HasPrefix(t, PointerMark) {
			e.buf, err = appendMarked(e.buf, t)
		} else {
			e.buf, plain, err = jsontext.AppendStringPlain(e.buf, t)
		}
		if err != nil {
			return err
		}
		if !plain && !utf8.ValidString(t) {
			// Protobuf strings must be UTF-8 (the JSON is, encoding/json
			// repairs it). Checked here, where only text with bytes beyond
			// printable ASCII arrives, rather than on every string.
			t = strings.ToValidUTF8(t, "\uFFFD")
		}
		return e.leaf(t)
	case float64:
		start := len(e.buf)
		if e.buf, err = jsontext.AppendFloat(e.buf, t); err != nil {
			return err
		}
		if num := e.buf[start:]; bytes.IndexByte(num, 'e') < 0 {
			// Without an exponent the JSON number is the leaf text
			// (strconv's 'f' format): a view of it, not a new string. The
			// buffer becomes the span's JSON; the one place that writes
			// over its bytes (a long list) moves the views first (rebase).
			return e.leaf(unsafe.String(unsafe.SliceData(num), len(num)))
		}
		return e.leaf(strconv.FormatFloat(t, 'f', -1, 64))
	case bool:
		e.buf = strconv.AppendBool(e.buf, t)
		return e.leaf(strconv.FormatBool(t))
	case nil:
		e.buf = append(e.buf, "null"...)
		return e.leaf("null")
	default:
		start := len(e.buf)
		if e.buf, err = jsontext.Append(e.buf, v); err != nil {
			return err
		}
		return e.leaf(string(e.buf[start:]))
	}
	return nil
}

// appendMarked writes the JSON string of s, which starts with PointerMark,
// with that U+FFFF escaped (the same value): it never looks like a pointer.
func appendMarked(b []byte, s string) ([]byte, error) {
	tok, err := jsontext.AppendString(nil, s[len("\uffff"):])
	if err != nil {
		return nil, err
	}
	return append(append(b, `"\uffff`...), tok[1:]...), nil
}

// list writes the elements of a list (its JSON) and their leaves.
func (e *flatEncoder) list(t []any) error {
	if t == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	e.buf = append(e.buf, '[')
	e.depth++
	for i, el := range t {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		n := len(e.path)
		e.path = strconv.AppendInt(append(e.path, '.'), int64(i), 10)
		err := e.value(el)
		e.path = e.path[:n]
		if err != nil {
			return err
		}
	}
	e.depth--
	e.buf = append(e.buf, ']')
	return nil
}

// jsonText is v's JSON (as jsontext.Marshal writes it, pdata's scalar types as
// the canonical attributes hold them) cut to at most limit bytes, written
// with an explicit stack: v may nest far deeper than a goroutine's stack
