package ingest

// The OTLP protobuf decoder: an ExportTraceServiceRequest read straight from
// the wire into raw spans. pdata's decoder builds a tree of its own structs
// and RawSpans then copies every attribute out of it again (AsRaw): a third
// of the allocations of a span before normalisation. This one fills the
// raw spans in one pass and takes every string from one copy of the body.
// FuzzDecodeOTLPProto holds it to pdata + RawSpans on any input: the same
// spans, and an error exactly when pdata errs. It follows pdata v1.70's
// decoding rather than protobuf's letter where they differ: a message
// field sent twice is merged (Resource, Scope, Status, a KeyValue's value),
// an AnyValue's oneof is replaced by its last member, the deprecated
// instrumentation_library_spans (1000) are used when scope_spans is empty.

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireStart  = 3
	wireEnd    = 4
	wireI32    = 5
)

var (
	errWireLength   = errors.New("proto: negative length found during unmarshaling")
	errWireOverflow = errors.New("proto: integer overflow")
	errWireEndGroup = errors.New("proto: unexpected end of group")
	errWireID       = errors.New("invalid length for ID")
)

// DecodeOTLPProto decodes a protobuf ExportTraceServiceRequest into raw
// spans: RawSpans(DecodeOTLP(body, false)) without pdata in between. The
// error is DecodeOTLP's.
func DecodeOTLPProto(body []byte) ([]spanmodel.Raw, error) {
	d := wireDecoder{text: string(body)} // every string is a view of this one copy
	if err := d.request(body); err != nil {
		return nil, errs.WithDetail(errs.Invalid, "tracing.bad_otlp", "malformed OTLP body",
			fmt.Sprintf("the body is not an OTLP ExportTraceServiceRequest (protobuf): %v", err))
	}
	if d.raws == nil {
		d.raws = []spanmodel.Raw{}
	}
	return d.raws, nil
}

type wireDecoder struct {
	text string // the body as a string
	body []byte
	raws []spanmodel.Raw
	ids  wireIDs
}

// str is b, a sub-slice of the body, as a string: a view of the copy.
func (d *wireDecoder) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	// Both pointers read in one expression: no stack move in between.
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(d.body))))
	return d.text[off : off+len(b)]
}

// field is one field of a message: its number, wire type, and its value
// (the varint or fixed number, or the bytes of a length-delimited field).
type field struct {
	num  int32
	wire int8
	n    uint64
	b    []byte
}

// next reads the field at buf[pos:], as pdata does; an unknown field is
// skipped (groups included) and returned with num as read.
func next(buf []byte, pos int) (field, int, error) {
	var f field
	tag, pos, err := varint(buf, pos)
	if err != nil {
		return f, 0, err
	}
	f.num, f.wire = int32(tag>>3), int8(tag&7)
	if f.num <= 0 {
		return f, 0, fmt.Errorf("proto: illegal field=%d (tag=%d, pos=%d)", f.num, tag, pos)
	}
	switch f.wire {
	case wireVarint:
		f.n, pos, err = varint(buf, pos)
	case wireI64:
		if pos+8 > len(buf) {
			return f, 0, io.ErrUnexpectedEOF
		}
		f.n, pos = binary.LittleEndian.Uint64(buf[pos:]), pos+8
	case wireI32:
		if pos+4 > len(buf) {
			return f, 0, io.ErrUnexpectedEOF
		}
		f.n, pos = uint64(binary.LittleEndian.Uint32(buf[pos:])), pos+4
	case wireLen:
		var n uint64
		if n, pos, err = varint(buf, pos); err != nil {
			return f, 0, err
		}
		if int(n) < 0 {
			return f, 0, errWireLength
		}
		end := pos + int(n)
		if end < 0 || end > len(buf) {
			return f, 0, io.ErrUnexpectedEOF
		}
		f.b, pos = buf[pos:end], end
	default:
		pos, err = skipGroup(buf, pos, f.wire)
	}
	return f, pos, err
}

// skipGroup is pdata's ConsumeUnknown for the wire types that are not
// values: a group is skipped to its end, whatever the field numbers in it.
func skipGroup(buf []byte, pos int, wire int8) (int, error) {
	depth := 0
	for pos < len(buf) {
		var err error
		switch wire {
		case wireVarint:
			_, pos, err = varint(buf, pos)
			return pos, err
		case wireI64:
			if pos+8 > len(buf) {
				return 0, io.ErrUnexpectedEOF
			}
			return pos + 8, nil
		case wireI32:
			if pos+4 > len(buf) {
				return 0, io.ErrUnexpectedEOF
			}
			return pos + 4, nil
		case wireLen:
			var n uint64
			if n, pos, err = varint(buf, pos); err != nil {
				return 0, err
			}
			if int(n) < 0 {
				return 0, errWireLength
			}
			end := pos + int(n)
			if end < 0 || end > len(buf) {
				return 0, io.ErrUnexpectedEOF
			}
			return end, nil
		case wireStart:
			depth++
		case wireEnd:
			if depth == 0 {
				return 0, errWireEndGroup
			}
			depth--
		default:
			return 0, fmt.Errorf("proto: illegal wireType %d", wire)
		}
		if depth == 0 {
			return pos, nil
		}
		var tag uint64
		if tag, pos, err = varint(buf, pos); err != nil {
			return 0, err
		}
		if num := int32(tag >> 3); num <= 0 {
			return 0, fmt.Errorf("proto: illegal field=%d (tag=%d, pos=%d)", num, tag, pos)
		}
		wire = int8(tag & 7)
	}
	return 0, io.ErrUnexpectedEOF
}

func varint(buf []byte, pos int) (uint64, int, error) {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, errWireOverflow
		}
		if pos >= len(buf) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		b := buf[pos]
		pos++
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, pos, nil
		}
	}
}

// msgReader walks the fields of one message. A known field number with
// the wrong wire type is an error, as in pdata: want gives each known
// number's wire type (-1: unknown, skipped).
type msgReader struct {
	buf  []byte
	pos  int
	want func(int32) int8
	f    field
	err  error
}

func fieldsOf(buf []byte, want func(int32) int8) msgReader {
	return msgReader{buf: buf, want: want}
}

// next moves to the next known field (r.f); false at the end or on an
// error (r.err).
func (r *msgReader) next() bool {
	for r.pos < len(r.buf) {
		f, p, err := next(r.buf, r.pos)
		if err != nil {
			r.err = err
			return false
		}
		r.pos = p
		w := r.want(f.num)
		if w < 0 {
			continue
		}
		if f.wire != w {
			r.err = fmt.Errorf("proto: wrong wireType = %d for field %d", f.wire, f.num)
			return false
		}
		r.f = f
		return true
	}
	return false
}

func onlyLen(n int32) int8 {
	if n == 1 {
		return wireLen
	}
	return -1
}

func (d *wireDecoder) request(body []byte) error {
	// A sub-slice of body is at the same offset in text.
	d.body = body
	r := fieldsOf(body, onlyLen)
	for r.next() {
		if err := d.resourceSpans(r.f.b); err != nil {
			return err
		}
	}
	return r.err
}

func resourceSpansWire(n int32) int8 {
	switch n {
	case 1, 2, 3, 1000:
		return wireLen
	}
	return -1
}

func (d *wireDecoder) resourceSpans(buf []byte) error {
	var resource, scopes, deprecated [][]byte
	r := fieldsOf(buf, resourceSpansWire)
	for r.next() {
		switch r.f.num {
		case 1:
			resource = append(resource, r.f.b)
		case 2:
			scopes = append(scopes, r.f.b)
		case 1000:
			deprecated = append(deprecated, r.f.b)
		}
	}
	if r.err != nil {
		return r.err
	}
	attrs := map[string]any{}
	for _, b := range resource {
		if err := d.resource(b, attrs); err != nil {
			return err
		}
	}
	for _, s := range scopes {
		if err := d.scopeSpans(s, attrs); err != nil {
			return err
		}
	}
	if len(scopes) == 0 {
		for _, s := range deprecated {
			if err := d.scopeSpans(s, attrs); err != nil {
				return err
			}
		}
		return nil
	}
	// The deprecated spans are then dropped, but still decoded: an error
	// in them fails the request in pdata.
	n := len(d.raws)
	for _, s := range deprecated {
		if err := d.scopeSpans(s, attrs); err != nil {
			return err
		}
	}
	clear(d.raws[n:])
	d.raws = d.raws[:n]
	return nil
}

func resourceWire(n int32) int8 {
	switch n {
	case 1, 3:
		return wireLen
	case 2:
		return wireVarint
	}
	return -1
}

func (d *wireDecoder) resource(buf []byte, attrs map[string]any) error {
	r := fieldsOf(buf, resourceWire)
	for r.next() {
		var err error
		switch r.f.num {
		case 1:
			err = d.keyValue(r.f.b, attrs)
		case 3:
			err = entityRef(r.f.b)
		}
		if err != nil {
			return err
		}
	}
	return r.err
}

func entityRefWire(n int32) int8 {
	if n >= 1 && n <= 4 {
		return wireLen
	}
	return -1
}

func entityRef(buf []byte) error {
	r := fieldsOf(buf, entityRefWire)
	for r.next() {
	}
	return r.err
}

func scopeSpansWire(n int32) int8 {
	if n >= 1 && n <= 3 {
		return wireLen
	}
	return -1
}

func scopeWire(n int32) int8 {
	switch n {
	case 1, 2, 3:
		return wireLen
	case 4:
		return wireVarint
	}
	return -1
}

func (d *wireDecoder) scopeSpans(buf []byte, resource map[string]any) error {
	var name, version string
	var spans [][]byte
	r := fieldsOf(buf, scopeSpansWire)
	for r.next() {
		switch r.f.num {
		case 1:
			s := fieldsOf(r.f.b, scopeWire)
			for s.next() {
				switch s.f.num {
				case 1:
					name = d.str(s.f.b)
				case 2:
					version = d.str(s.f.b)
				case 3:
					if err := d.keyValue(s.f.b, nil); err != nil { // the scope's attributes are not kept
						return err
					}
				}
			}
			if s.err != nil {
				return s.err
			}
		case 2:
			spans = append(spans, r.f.b)
		}
	}
	if r.err != nil {
		return r.err
	}
	for _, s := range spans {
		d.raws = append(d.raws, spanmodel.Raw{OTLP: true, Resource: resource, ScopeName: name, ScopeVersion: version})
		if err := d.span(s, &d.raws[len(d.raws)-1]); err != nil {
			return err
		}
	}
	return nil
}

// wireIDs remembers the last trace and parent id converted, as hexCache.
type wireIDs struct {
	trace, parent       string // the ids' bytes (views of the body)
	traceHex, parentHex string
}

func spanWire(n int32) int8 {
	switch n {
	case 1, 2, 3, 4, 5, 9, 11, 13, 15:
		return wireLen
	case 6, 10, 12, 14:
		return wireVarint
	case 7, 8:
		return wireI64
	case 16:
		return wireI32
	}
	return -1
}

func statusWire(n int32) int8 {
	switch n {
	case 2:
		return wireLen
	case 3:
		return wireVarint
	}
	return -1
}

// id checks an id's length: none, or n bytes.
func id(b []byte, n int) error {
	if len(b) != 0 && len(b) != n {
		return errWireID
	}
	return nil
}

func (d *wireDecoder) span(buf []byte, raw *spanmodel.Raw) error {
	var trace, spanID, parent []byte
	var kind, code int32
	var start, end uint64
	attrs := map[string]any{}
	r := fieldsOf(buf, spanWire)
	for r.next() {
		var err error
		switch f := &r.f; f.num {
		case 1:
			trace, err = f.b, id(f.b, 16)
		case 2:
			spanID, err = f.b, id(f.b, 8)
		case 4:
			parent, err = f.b, id(f.b, 8)
		case 5:
			raw.Name = d.str(f.b)
		case 6:
			kind = int32(f.n)
		case 7:
			start = f.n
		case 8:
			end = f.n
		case 9:
			err = d.keyValue(f.b, attrs)
		case 11:
			err = d.event(f.b, raw)
		case 13:
			err = d.link(f.b, raw)
		case 15:
			s := fieldsOf(f.b, statusWire)
			for s.next() {
				if s.f.num == 2 {
					raw.StatusMessage = d.str(s.f.b)
				} else {
					code = int32(s.f.n)
				}
			}
			err = s.err
		}
		if err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
	raw.Attributes = attrs
	if !zeroID(trace) {
		if s := d.str(trace); s != d.ids.trace || d.ids.traceHex == "" {
			d.ids.trace, d.ids.traceHex = s, hex.EncodeToString(trace)
		}
		raw.TraceID = d.ids.traceHex
	}
	if !zeroID(spanID) {
		raw.SpanID = hex.EncodeToString(spanID)
	}
	if !zeroID(parent) {
		if s := d.str(parent); s != d.ids.parent || d.ids.parentHex == "" {
			d.ids.parent, d.ids.parentHex = s, hex.EncodeToString(parent)
		}
		raw.ParentID = d.ids.parentHex
	}
	raw.Kind = strconv.Itoa(int(kind))
	raw.StatusCode = strconv.Itoa(int(code))
	if start != 0 {
		raw.Start = time.Unix(0, int64(start)).UTC()
	}
	if end != 0 {
		raw.End = time.Unix(0, int64(end)).UTC()
	}
	return nil
}

// zeroID says whether an id is absent: empty or all zero bytes.
func zeroID(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func eventWire(n int32) int8 {
	switch n {
	case 1:
		return wireI64
	case 2, 3:
		return wireLen
	case 4:
		return wireVarint
	}
	return -1
}

func (d *wireDecoder) event(buf []byte, raw *spanmodel.Raw) error {
	e := spanmodel.RawEvent{Attributes: map[string]any{}}
	var ts uint64
	r := fieldsOf(buf, eventWire)
	for r.next() {
		switch r.f.num {
		case 1:
			ts = r.f.n
		case 2:
			e.Name = d.str(r.f.b)
		case 3:
			if err := d.keyValue(r.f.b, e.Attributes); err != nil {
				return err
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	if ts != 0 {
		e.Time = time.Unix(0, int64(ts)).UTC()
	}
	raw.Events = append(raw.Events, e)
	return nil
}

func linkWire(n int32) int8 {
	switch n {
	case 1, 2, 3, 4:
		return wireLen
	case 5:
		return wireVarint
	case 6:
		return wireI32
	}
	return -1
}

func (d *wireDecoder) link(buf []byte, raw *spanmodel.Raw) error {
	var trace, spanID []byte
	attrs := map[string]any{}
	r := fieldsOf(buf, linkWire)
	for r.next() {
		var err error
		switch f := &r.f; f.num {
		case 1:
			trace, err = f.b, id(f.b, 16)
		case 2:
			spanID, err = f.b, id(f.b, 8)
		case 4:
			err = d.keyValue(f.b, attrs)
		}
		if err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
	l := spanmodel.RawLink{Attributes: attrs}
	if !zeroID(trace) {
		l.TraceID = hex.EncodeToString(trace)
	}
	if !zeroID(spanID) {
		l.SpanID = hex.EncodeToString(spanID)
	}
	raw.Links = append(raw.Links, l)
	return nil
}

func keyValueWire(n int32) int8 {
	switch n {
	case 1, 2:
		return wireLen
	case 3:
		return wireVarint
	}
	return -1
}

// keyValue decodes one KeyValue into m (nil: validated only). A key sent
// twice keeps the last; a value sent twice is merged (its last member).
func (d *wireDecoder) keyValue(buf []byte, m map[string]any) error {
	var key string
	var v any
	r := fieldsOf(buf, keyValueWire)
	for r.next() {
		switch r.f.num {
		case 1:
			key = d.str(r.f.b)
		case 2:
			var err error
			if v, err = d.anyValue(r.f.b, v); err != nil {
				return err
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	if m != nil {
		m[key] = v
	}
	return nil
}

func anyValueWire(n int32) int8 {
	switch n {
	case 1, 5, 6, 7:
		return wireLen
	case 2, 3, 8:
		return wireVarint
	case 4:
		return wireI64
	}
	return -1
}

// anyValue decodes an AnyValue over v (the value so far: a member replaces
// it, an empty message keeps it), as AsRaw gives it: nil when unset.
func (d *wireDecoder) anyValue(buf []byte, v any) (any, error) {
	r := fieldsOf(buf, anyValueWire)
	for r.next() {
		switch f := &r.f; f.num {
		case 1:
			v = d.str(f.b)
		case 2:
			v = f.n != 0
		case 3:
			v = int64(f.n)
		case 4:
			v = math.Float64frombits(f.n)
		case 5:
			list := []any{}
			l := fieldsOf(f.b, onlyLen)
			for l.next() {
				el, err := d.anyValue(l.f.b, nil)
				if err != nil {
					return nil, err
				}
				list = append(list, el)
			}
			if l.err != nil {
				return nil, l.err
			}
			v = list
		case 6:
			m := map[string]any{}
			l := fieldsOf(f.b, onlyLen)
			for l.next() {
				if err := d.keyValue(l.f.b, m); err != nil {
					return nil, err
				}
			}
			if l.err != nil {
				return nil, l.err
			}
			v = m
		case 7:
			var b []byte
			if len(f.b) > 0 {
				b = append([]byte(nil), f.b...)
			}
			v = b
		case 8:
			v = nil // string_value_strindex: a profiles dictionary index, no value here
		}
	}
	return v, r.err
}
