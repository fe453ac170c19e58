package spanmodel

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Limits bound one span, in the spirit of OpenTelemetry's SpanLimits, so
// that what a request costs is linear in its size and whatever ingest
// accepts can be written and read back. Over a limit a span is trimmed and
// the cut counted under attributes ag.unsupported.span_limits, except for
// its encoded size: a span over MaxBytes is rejected alone. A span marked
// Strict (the one span of an annotation or simple trace) is rejected over
// any limit. Variables: TRACING_SPAN_*; a zero field takes its default.
type Limits struct {
	MaxAttributes  int `split_words:"true" default:"1024" desc:"most attribute leaves a stored span keeps after flattening (a list counts, and so does each element, and the derived ag.* fields); the rest, last in key order, are dropped. Every cut of these limits is counted under the span's attributes ag.unsupported.span_limits; annotations and simple traces are refused (413) instead"`
	MaxValueLength int `split_words:"true" default:"1048576" desc:"longest string in a span (attribute values, name, status message, event names), in bytes; longer ones are cut at a character boundary and counted"`
	MaxKeyLength   int `split_words:"true" default:"1024" desc:"longest attribute key as a dotted path, in bytes; attributes with longer keys are dropped and counted"`
	MaxDepth       int `split_words:"true" default:"32" desc:"deepest nesting of attribute values (each segment of a dotted key counts); an object or list nested deeper is stored as its JSON text, cut to TRACING_SPAN_MAX_VALUE_LENGTH, and counted"`
	MaxEvents      int `split_words:"true" default:"128" desc:"most events one span keeps (the latest, as OpenTelemetry SDKs do); the rest are dropped and counted"`
	MaxLinks       int `split_words:"true" default:"128" desc:"most links one span keeps (the latest); the rest are dropped and counted"`
	MaxBytes       int `split_words:"true" default:"8388608" desc:"largest span once encoded for storage, in bytes; a larger span is rejected alone (OTLP partial success, the rejected list of native ingest, 413 where the request is that one span)"`
}

// DefaultLimits are the documented defaults.
var DefaultLimits = Limits{MaxAttributes: 1024, MaxValueLength: 1 << 20, MaxKeyLength: 1024, MaxDepth: 32,
	MaxEvents: 128, MaxLinks: 128, MaxBytes: 8 << 20}

// Validate refuses limits too small for the canonical span itself (its
// derived ag.* paths nest up to five deep) or a span larger than one
// message can carry.
func (l Limits) Validate() error {
	l = l.orDefault()
	for _, c := range []struct {
		name     string
		v, least int
	}{{"MAX_ATTRIBUTES", l.MaxAttributes, 64}, {"MAX_VALUE_LENGTH", l.MaxValueLength, 256}, {"MAX_KEY_LENGTH", l.MaxKeyLength, 128},
		{"MAX_DEPTH", l.MaxDepth, 8}, {"MAX_EVENTS", l.MaxEvents, 1}, {"MAX_LINKS", l.MaxLinks, 1}, {"MAX_BYTES", l.MaxBytes, 64 << 10}} {
		if c.v < c.least {
			return fmt.Errorf("span limit %s is %d; it must be at least %d", c.name, c.v, c.least)
		}
	}
	if l.MaxBytes > maxBatchBytes {
		return fmt.Errorf("span limit MAX_BYTES is %d; one message carries at most %d", l.MaxBytes, maxBatchBytes)
	}
	return nil
}

// maxBatchBytes is spanstream.MaxBatchBytes, the most one span-batch
// message carries. It is not imported: spanstream holds the stream's
// JetStream configuration, and the runtime's evaluation use cases, which
// normalise spans through this package, import no NATS client
// (services/runtime/internal/evalrun's TestUseCasesImportNoInfrastructure).
// spanstream's TestSpanLimitsFitOneBatch keeps the two equal.
const maxBatchBytes = 256 << 20

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, d *int }{{&l.MaxAttributes, &d.MaxAttributes}, {&l.MaxValueLength, &d.MaxValueLength},
		{&l.MaxKeyLength, &d.MaxKeyLength}, {&l.MaxDepth, &d.MaxDepth}, {&l.MaxEvents, &d.MaxEvents}, {&l.MaxLinks, &d.MaxLinks}, {&l.MaxBytes, &d.MaxBytes}} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}

// LimitError is a span refused for a limit: over MaxBytes, or over any
// limit when it is Strict.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// IsLimit says whether err refuses a span for a limit.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

// Cut counts what the limits took from one span.
type Cut struct {
	DroppedAttributes int
	TruncatedValues   int
	TrimmedNesting    int
	DroppedEvents     int
	DroppedLinks      int
	// First says where and why the first cut was made.
	First string
}

// recordLeaves is how many leaves the record of a cut adds to a span.
const recordLeaves = 5

func (c *Cut) add(o Cut) {
	c.DroppedAttributes += o.DroppedAttributes
	c.TruncatedValues += o.TruncatedValues
	c.TrimmedNesting += o.TrimmedNesting
	c.DroppedEvents += o.DroppedEvents
	c.DroppedLinks += o.DroppedLinks
	if c.First == "" {
		c.First = o.First
	}
}

func (c Cut) zero() bool {
	return c.DroppedAttributes == 0 && c.TruncatedValues == 0 && c.TrimmedNesting == 0 && c.DroppedEvents == 0 && c.DroppedLinks == 0
}

// record is the cut as stored under ag.unsupported.span_limits.
func (c Cut) record() map[string]any {
	m := map[string]any{}
	for k, v := range map[string]int{"dropped_attributes": c.DroppedAttributes, "truncated_values": c.TruncatedValues,
		"trimmed_nesting": c.TrimmedNesting, "dropped_events": c.DroppedEvents, "dropped_links": c.DroppedLinks} {
		if v > 0 {
			m[k] = float64(v)
		}
	}
	return m
}

// addCut adds c to what the limits took from s and records the total
// where readers see it.
func (s *Span) addCut(c Cut) {
	if c.zero() {
		return
	}
	if s.cut == nil {
		s.cut = &Cut{}
	}
	s.cut.add(c)
	sub(s.arena, s.Attributes, "ag", "unsupported")["span_limits"] = s.cut.record()
}

// raw applies the limits to a span as the client sent it, before anything
// else reads it: strings cut to length, names, ids and keys made valid
// UTF-8 (invalid bytes become U+FFFD, as the collector's conversions do;
// protobuf strings must be UTF-8; attribute values are checked as they are
// encoded), values in their canonical types (JSON numbers, hex bytes, the
// text of NaN and infinities, which JSON cannot carry), deep values and
// long keys trimmed, and the counts bounded. Everything after it, linear in
// its input, is then bounded by the limits.
func (l *Limits) raw(r *Raw, res resourceCuts) Cut {
	t := newTrimmer(l, true, "")
	// Ids and enums longer than this are invalid anyway: cut them so an
	// error message quoting one stays short.
	for _, s := range []*string{&r.TraceID, &r.SpanID, &r.ParentID, &r.Kind, &r.StatusCode, &r.ScopeName, &r.ScopeVersion} {
		*s = t.short(*s)
	}
	t.where = "span_name"
	r.Name = t.fixString(r.Name)
	t.where = "status_message"
	r.StatusMessage = t.fixString(r.StatusMessage)
	if s, ok := r.Start.(string); ok {
		r.Start = t.short(s)
	}
	if s, ok := r.End.(string); ok {
		r.End = t.short(s)
	}
	if n := len(r.Events) - l.MaxEvents; n > 0 {
		t.cut.DroppedEvents += n
		t.cut.note("events", fmt.Sprintf("%d events are over TRACING_SPAN_MAX_EVENTS (%d)", len(r.Events), l.MaxEvents))
		r.Events = r.Events[n:]
	}
	if n := len(r.Links) - l.MaxLinks; n > 0 {
		t.cut.DroppedLinks += n
		t.cut.note("links", fmt.Sprintf("%d links are over TRACING_SPAN_MAX_LINKS (%d)", len(r.Links), l.MaxLinks))
		r.Links = r.Links[n:]
	}
	t.where = "attributes"
	t.trim(r.Attributes, l.MaxAttributes)
	// The spans of one OTLP resource share its attributes: trimmed once
	// (trimResources), and the cut counted on each of them.
	if id := mapID(r.Resource); id != nil {
		t.cut.add(res[id])
	}
	for i := range r.Events {
		e := &r.Events[i]
		t.where, t.idx, t.suffix = "events", i, ".name"
		e.Name = t.fixString(e.Name)
		if s, ok := e.Time.(string); ok {
			e.Time = t.short(s)
		}
		t.suffix = ".attributes"
		t.trim(e.Attributes, l.MaxAttributes)
	}
	for i := range r.Links {
		lk := &r.Links[i]
		lk.TraceID, lk.SpanID = t.short(lk.TraceID), t.short(lk.SpanID)
		t.where, t.idx, t.suffix = "links", i, ".attributes"
		t.trim(lk.Attributes, l.MaxAttributes)
	}
	if r.References != nil {
		t.where, t.idx, t.suffix = "", -1, ""
		wrap := map[string]any{"references": r.References}
		t.trim(wrap, l.MaxAttributes)
		r.References = wrap["references"]
	}
	return t.cut
}

// resourceCuts is what the limits took from each resource's attributes,
// by map (mapID).
type resourceCuts map[unsafe.Pointer]Cut

// trimResources trims the resource attributes of raws, each map once (the
// spans of one OTLP resource share it, consecutive), before the spans are
// normalised side by side: raw then only reads them.
func (l *Limits) trimResources(raws []Raw) resourceCuts {
	cuts := resourceCuts{}
	var last unsafe.Pointer
	for i := range raws {
		id := mapID(raws[i].Resource)
		if id == nil || id == last {
			continue
		}
		last = id
		if _, done := cuts[id]; !done {
			t := newTrimmer(l, true, "resource")
			t.trim(raws[i].Resource, l.MaxAttributes)
			cuts[id] = t.cut
		}
	}
	return cuts
}

// mapID is m's identity (nil for an empty map).
func mapID(m map[string]any) unsafe.Pointer {
	if len(m) == 0 {
		return nil
	}
	return reflect.ValueOf(m).UnsafePointer()
}

func (l *Limits) overLength(n int) string {
	return fmt.Sprintf("a string of %d bytes is over TRACING_SPAN_MAX_VALUE_LENGTH (%d)", n, l.MaxValueLength)
}

func (c *Cut) note(where, why string) {
	if c.First == "" {
		c.First = where + ": " + why
	}
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// trimmer applies the limits to one attribute tree, in place.
type trimmer struct {
	l      *Limits
	cut    Cut
	repair bool // raw input: fix keys' UTF-8 and value types (decoded JSON text needs neither)
	// where names the tree for Cut.First: where[idx]suffix (idx -1: none).
	where, suffix string
	idx           int
	plen          int // length of the dotted path so far
	level         int // entries (keys or list elements) down to the value at hand

	// The path of the first cut is collected while the walk returns from
	// it, so that the walk itself tracks no path: level noted is the next
	// level whose key or index belongs to it.
	pending bool
	noted   int
	why     string
	rev     []seg // the path, innermost first
}

func newTrimmer(l *Limits, repair bool, where string) trimmer {
	return trimmer{l: l, repair: repair, where: where, idx: -1}
}

// seg is one step of a path: a key, or a list index when key is "".
type seg struct {
	key string
	idx int
}

// note remembers why the first cut was made; its path follows as the walk
// returns (collect), and flush writes it.
func (t *trimmer) note(why string) {
	if t.cut.First == "" && !t.pending {
		t.pending, t.noted, t.why = true, t.level, why
	}
}

func (t *trimmer) collect(s seg) {
	if t.pending && t.level == t.noted {
		t.rev = append(t.rev, s)
		t.noted--
	}
}

func (t *trimmer) flush() {
	if !t.pending {
		return
	}
	var b strings.Builder
	b.WriteString(t.where)
	if t.idx >= 0 {
		b.WriteString("[" + strconv.Itoa(t.idx) + "]")
	}
	b.WriteString(t.suffix)
	for i := len(t.rev) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if t.rev[i].key != "" {
			b.WriteString(t.rev[i].key)
		} else {
			b.WriteString(strconv.Itoa(t.rev[i].idx))
		}
	}
	t.cut.First = b.String() + ": " + t.why
	t.pending, t.rev = false, nil
}

// short is an id, enum or timestamp text made valid and cut to 256 bytes.
func (t *trimmer) short(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return truncate(s, 256)
}

// trim bounds m: first everything that does not depend on order (strings,
// keys, depth), counting the leaves; then, only if they are more than
// budget, the leaves beyond it in key order ("ag" first) are dropped.
func (t *trimmer) trim(m map[string]any, budget int) {
	if len(m) == 0 {
		return
	}
	if t.fixMap(m, 0) > budget {
		left := budget
		t.keep(m, &left, 0)
	}
	t.flush()
}

func (t *trimmer) fixMap(m map[string]any, depth int) (leaves int) {
	var renamed []string
	for k, v := range m {
		if t.repair && !utf8.ValidString(k) {
			renamed = append(renamed, k)
			continue
		}
		leaves += t.fixEntry(m, k, v, depth)
	}
	for _, k := range renamed {
		v := m[k]
		delete(m, k)
		nk := strings.ToValidUTF8(k, "\uFFFD")
		if _, taken := m[nk]; taken {
			t.cut.DroppedAttributes++
			t.note("key " + strconv.Quote(nk) + " twice once repaired")
			continue
		}
		m[nk] = v
		leaves += t.fixEntry(m, nk, v, depth)
	}
	return leaves
}

// fixEntry checks the key k of m (a dotted key nests one level per
// segment), then fixes its value.
func (t *trimmer) fixEntry(m map[string]any, k string, v any, depth int) int {
	t.level++
	n := t.entry(m, k, v, depth)
	t.collect(seg{key: k})
	t.level--
	return n
}

func (t *trimmer) entry(m map[string]any, k string, v any, depth int) int {
	plen := t.plen + len(k)
	if t.plen > 0 {
		plen++
	}
	segs := 1 + strings.Count(k, ".")
	switch {
	case plen > t.l.MaxKeyLength:
		delete(m, k)
		t.cut.DroppedAttributes++
		t.note(fmt.Sprintf("a key of %d bytes is over TRACING_SPAN_MAX_KEY_LENGTH (%d)", plen, t.l.MaxKeyLength))
		return 0
	case depth+segs > t.l.MaxDepth:
		delete(m, k)
		t.cut.DroppedAttributes++
		t.note(fmt.Sprintf("the key nests deeper than TRACING_SPAN_MAX_DEPTH (%d)", t.l.MaxDepth))
		return 0
	}
	saved := t.plen
	t.plen = plen
	nv, n, changed := t.fixValue(v, depth+segs)
	t.plen = saved
	if changed {
		m[k] = nv
	}
	return n
}

// fixValue is v within the limits, its number of leaves, and whether it
// is a new value (unchanged values are not stored again: boxing a string
// into an interface allocates); depth is the number of path segments down
// to v.
func (t *trimmer) fixValue(v any, depth int) (any, int, bool) {
	switch x := v.(type) {
	case string:
		if s, changed := t.fixStr(x); changed {
			return s, 1, true
		}
		return v, 1, false
	case map[string]any:
		if len(x) == 0 {
			return v, 0, false
		}
		if depth >= t.l.MaxDepth {
			return t.asText(x), 1, true
		}
		return v, t.fixMap(x, depth), false
	case []any:
		if len(x) == 0 {
			return v, 1, false
		}
		if depth >= t.l.MaxDepth || t.plen+1+digits(len(x)-1) > t.l.MaxKeyLength {
			return t.asText(x), 1, true
		}
		n := 1
		for i, e := range x {
			saved := t.plen
			t.plen += 1 + digits(i)
			t.level++
			ne, c, changed := t.fixValue(e, depth+1)
			t.collect(seg{idx: i})
			t.level--
			t.plen = saved
			if changed {
				x[i] = ne
			}
			n += c
		}
		return v, n, false
	}
	if t.repair {
		if c, changed := canonical(v); changed {
			return c, 1, true
		}
	}
	return v, 1, false
}

// fixString is s valid UTF-8 and within the length limit.
func (t *trimmer) fixString(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s, _ = t.fixStr(s)
	t.flush()
	return s
}

// fixStr is an attribute value within the length limit. Its UTF-8 is
// checked by the encoder, which already scans every byte of it (and a
// raw pass over every string costs a few percent of ingest).
func (t *trimmer) fixStr(s string) (string, bool) {
	changed := false
	if len(s) > t.l.MaxValueLength {
		t.cut.TruncatedValues++
		t.note(t.l.overLength(len(s)))
		s, changed = truncate(s, t.l.MaxValueLength), true
	}
	return s, changed
}

// asText is a value nested too deep, as its JSON text.
func (t *trimmer) asText(v any) any {
	t.cut.TrimmedNesting++
	t.note(fmt.Sprintf("nests deeper than TRACING_SPAN_MAX_DEPTH (%d) or TRACING_SPAN_MAX_KEY_LENGTH (%d); stored as JSON text", t.l.MaxDepth, t.l.MaxKeyLength))
	return jsonText(v, t.l.MaxValueLength)
}

// canonical is a scalar as the canonical attributes hold it, and whether
// that is a new value: pdata gives int64 and []byte, and JSON has no NaN
// or infinities.
func canonical(v any) (any, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case []byte:
		return hex.EncodeToString(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64), true
		}
	}
	return v, false
}

func digits(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// keep walks m in key order (at the root "ag" first, and in ag the small
// canonical fields before the free-form ones, so a span over the limit
// keeps its type, ids and metrics) and drops what is beyond the leaves
// left. level is 0 at the root, 1 in the root's ag object, 2 below.
func (t *trimmer) keep(m map[string]any, left *int, level int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a, level), rank(b, level); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		if *left <= 0 {
			delete(m, k)
			t.cut.DroppedAttributes++
			t.note(fmt.Sprintf("attributes from %.64q on are over TRACING_SPAN_MAX_ATTRIBUTES (%d)", k, t.l.MaxAttributes))
			continue
		}
		switch v := m[k].(type) {
		case map[string]any:
			next := 2
			if level == 0 && k == "ag" {
				next = 1
			}
			t.keep(v, left, next)
		case []any:
			m[k] = t.keepList(v, left)
		default:
			*left--
		}
	}
}

func (t *trimmer) keepList(x []any, left *int) []any {
	*left--
	for i, e := range x {
		if *left <= 0 {
			t.cut.DroppedAttributes += len(x) - i
			t.note(fmt.Sprintf("list elements from %d on are over TRACING_SPAN_MAX_ATTRIBUTES (%d)", i, t.l.MaxAttributes))
			return x[:i]
		}
		switch v := e.(type) {
		case map[string]any:
			t.keep(v, left, 2)
		case []any:
			x[i] = t.keepList(v, left)
		default:
			*left--
		}
	}
	return x
}

// agFirst orders the fields of the canonical ag object.
var agFirst = map[string]int{"type": 1, "session": 2, "user": 3, "references": 4, "metrics": 5, "flags": 6, "exception": 7}

func rank(k string, level int) int {
	switch level {
	case 0:
		if k == "ag" || strings.HasPrefix(k, "ag.") {
			return 0 // the ag object, or OTLP's flat ag.* keys
		}
		return 1
	case 1:
		if r, ok := agFirst[k]; ok {
			return r
		}
		return 100
	}
	return 0
}

// FitAttributes trims s's attributes to lim once the encoder found them
// over a limit, leaving room for the record of the cut, and records it. A
// Strict span is refused instead: the error is the *LimitError naming the
// first limit crossed.
func (s *Span) FitAttributes(lim *Limits) error {
	t := newTrimmer(lim, false, "attributes")
	t.trim(s.Attributes, lim.MaxAttributes-recordLeaves)
	if s.strict {
		return &LimitError{Msg: t.cut.First}
	}
	s.addCut(t.cut)
	return nil
}

// CutAttributes trims s's attributes to lim and records the cut, Strict
// or not: the encoder's last resort when the attributes cannot be encoded
// as JSON at all and are stored as their leaves only.
func (s *Span) CutAttributes(lim *Limits) {
	t := newTrimmer(lim, false, "attributes")
	t.trim(s.Attributes, lim.MaxAttributes)
	s.addCut(t.cut)
}
