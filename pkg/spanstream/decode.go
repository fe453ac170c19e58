package spanstream

import (
	"errors"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// unmarshalBatch is proto.Unmarshal of a SpanBatch for the writer, which
// reads every span once and inserts it: each string field is a view of
// data rather than a copy, so data must not change while the batch is in
// use (DecodeBatch hands it a buffer of its own). It accepts what
// proto.Unmarshal accepts and refuses what it refuses, invalid UTF-8 in a
// string field included; unknown fields, and known fields of another wire
// type (read as unknown ones by proto.Unmarshal), are skipped. A generic
// unmarshal spent a third of the writer's CPU allocating and copying
// strings (25 per span) and checking field types through reflection.
func unmarshalBatch(data []byte, b *spanspb.SpanBatch) error {
	d := decoder{data: data, keys: make([]string, 0, 1024), values: make([]string, 0, 1024)}
	for !d.done() {
		num, typ := d.tag()
		switch {
		case num == 1 && typ == protowire.BytesType:
			b.ProjectId = d.str()
		case num == 2 && typ == protowire.BytesType:
			b.UserId = d.str()
		case num == 3 && typ == protowire.VarintType:
			b.ReceivedUnixNano = int64(d.varint())
		case num == 4 && typ == protowire.BytesType:
			sp := &spanspb.Span{}
			sub := decoder{data: d.bytes(), keys: d.keys, values: d.values}
			if d.err == nil {
				sub.span(sp)
				d.err = sub.err
				d.keys, d.values = sub.keys, sub.values
			}
			b.Spans = append(b.Spans, sp)
		default:
			d.skip(num, typ)
		}
		if d.err != nil {
			return d.err
		}
	}
	return nil
}

type decoder struct {
	data []byte
	err  error
	// The attribute keys and values of the batch's spans, one after
	// another: each span's are a slice of these, not a slice of their own
	// grown one append at a time.
	keys, values []string
}

var errUTF8 = errors.New("string field contains invalid UTF-8")

func (d *decoder) done() bool { return d.err != nil || len(d.data) == 0 }

func (d *decoder) fail(n int) bool {
	if n < 0 {
		if d.err == nil {
			d.err = protowire.ParseError(n)
		}
		d.data = nil
		return true
	}
	return false
}

func (d *decoder) tag() (protowire.Number, protowire.Type) {
	num, typ, n := protowire.ConsumeTag(d.data)
	if n >= 0 && num > protowire.MaxValidNumber {
		n = -1 // ConsumeTag checks the lower bound only; proto.Unmarshal both
	}
	if d.fail(n) {
		return 0, 0
	}
	d.data = d.data[n:]
	return num, typ
}

func (d *decoder) varint() uint64 {
	v, n := protowire.ConsumeVarint(d.data)
	if d.fail(n) {
		return 0
	}
	d.data = d.data[n:]
	return v
}

// bytes is the next length-delimited field, a view of data.
func (d *decoder) bytes() []byte {
	v, n := protowire.ConsumeBytes(d.data)
	if d.fail(n) {
		return nil
	}
	d.data = d.data[n:]
	return v
}

// str is the next string field, a view of data.
func (d *decoder) str() string {
	v := d.bytes()
	if len(v) == 0 {
		return ""
	}
	s := unsafe.String(unsafe.SliceData(v), len(v))
	if !utf8.ValidString(s) && d.err == nil {
		d.err = errUTF8
		d.data = nil
	}
	return s
}

func (d *decoder) skip(num protowire.Number, typ protowire.Type) {
	if d.err != nil {
		return
	}
	n := protowire.ConsumeFieldValue(num, typ, d.data)
	if !d.fail(n) {
		d.data = d.data[n:]
	}
}

// run is the strings of arena from i on, nil when none (as proto.Unmarshal
// leaves a repeated field without elements), capped so that an append to
// it cannot write into the arena.
func run(arena []string, i int) []string {
	if i == len(arena) {
		return nil
	}
	return arena[i:len(arena):len(arena)]
}

// bytesField is a bytes field as proto.Unmarshal gives it (nil when
// empty), capped so that an append to it cannot write into data.
func bytesField(v []byte) []byte {
	if len(v) == 0 {
		return nil
	}
	return v[:len(v):len(v)]
}

// message decodes the next field, a message, with fn.
func (d *decoder) message(fn func(*decoder)) {
	sub := decoder{data: d.bytes()}
	if d.err != nil {
		return
	}
	fn(&sub)
	if sub.err != nil && d.err == nil {
		d.err = sub.err
		d.data = nil
	}
}

func (d *decoder) span(s *spanspb.Span) {
	k0, v0 := len(d.keys), len(d.values)
	defer func() {
		s.AttrKeys, s.AttrValues = run(d.keys, k0), run(d.values, v0)
	}()
	for !d.done() {
		num, typ := d.tag()
		if d.err != nil {
			return
		}
		if typ == protowire.BytesType {
			switch num {
			case 1:
				s.TraceId = d.str()
			case 2:
				s.SpanId = d.str()
			case 3:
				s.ParentId = d.str()
			case 4:
				s.TraceType = d.str()
			case 5:
				s.SpanType = d.str()
			case 6:
				s.SpanKind = d.str()
			case 7:
				s.SpanName = d.str()
			case 10:
				s.StatusCode = d.str()
			case 11:
				s.StatusMessage = d.str()
			case 12:
				s.SessionId = d.str()
			case 13:
				s.UserId = d.str()
			case 14:
				s.AgentId = d.str()
			case 15:
				s.AttributesJson = bytesField(d.bytes())
			case 16:
				d.keys = append(d.keys, d.str())
			case 17:
				d.values = append(d.values, d.str())
			case 18:
				e := &spanspb.Event{}
				d.message(func(d *decoder) { d.event(e) })
				s.Events = append(s.Events, e)
			case 19:
				l := &spanspb.Link{}
				d.message(func(d *decoder) { d.link(l) })
				s.Links = append(s.Links, l)
			case 20:
				r := &spanspb.Reference{}
				d.message(func(d *decoder) { d.reference(r) })
				s.References = append(s.References, r)
			case 21:
				h := &spanspb.Hash{}
				d.message(func(d *decoder) { d.hash(h) })
				s.Hashes = append(s.Hashes, h)
			case 24:
				s.CreatedById = d.str()
			default:
				d.skip(num, typ)
			}
			continue
		}
		if typ == protowire.VarintType {
			switch num {
			case 8:
				s.StartUnixMicro = int64(d.varint())
			case 9:
				s.EndUnixMicro = int64(d.varint())
			case 22:
				s.Deleted = d.varint() != 0
			case 23:
				s.CreatedUnixMicro = int64(d.varint())
			case 25:
				s.LinksSet = d.varint() != 0
			case 26:
				s.ExpiresUnixDay = int32(d.varint())
			default:
				d.skip(num, typ)
			}
			continue
		}
		d.skip(num, typ)
	}
}

func (d *decoder) event(e *spanspb.Event) {
	for !d.done() {
		num, typ := d.tag()
		switch {
		case num == 1 && typ == protowire.BytesType:
			e.Name = d.str()
		case num == 2 && typ == protowire.VarintType:
			e.TimeUnixMicro = int64(d.varint())
		case num == 3 && typ == protowire.BytesType:
			e.AttributesJson = bytesField(d.bytes())
		default:
			d.skip(num, typ)
		}
	}
}

func (d *decoder) link(l *spanspb.Link) {
	for !d.done() {
		num, typ := d.tag()
		switch {
		case num == 1 && typ == protowire.BytesType:
			l.TraceId = d.str()
		case num == 2 && typ == protowire.BytesType:
			l.SpanId = d.str()
		case num == 3 && typ == protowire.BytesType:
			l.Key = d.str()
		case num == 4 && typ == protowire.BytesType:
			l.AttributesJson = bytesField(d.bytes())
		default:
			d.skip(num, typ)
		}
	}
}

func (d *decoder) reference(r *spanspb.Reference) {
	for !d.done() {
		num, typ := d.tag()
		switch {
		case num == 1 && typ == protowire.BytesType:
			r.Key = d.str()
		case num == 2 && typ == protowire.BytesType:
			r.Id = d.str()
		case num == 3 && typ == protowire.BytesType:
			r.Slug = d.str()
		case num == 4 && typ == protowire.BytesType:
			r.Version = d.str()
		default:
			d.skip(num, typ)
		}
	}
}

func (d *decoder) hash(h *spanspb.Hash) {
	for !d.done() {
		num, typ := d.tag()
		switch {
		case num == 1 && typ == protowire.BytesType:
			h.Id = d.str()
		case num == 2 && typ == protowire.BytesType:
			h.Key = d.str()
		default:
			d.skip(num, typ)
		}
	}
}
