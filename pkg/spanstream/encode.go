package spanstream

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// appendBatch appends b's protobuf to buf: the very bytes proto.Marshal
// writes (fields in number order, zero values left out), and its error on
// a string field that is not UTF-8. A generic marshal first walks the
// whole batch to size it, then again through reflection to write it; the
// spans' sizes here are sums of their fields' lengths. A message carrying
// unknown fields (none of ours does) goes through proto.Marshal.
func appendBatch(buf []byte, b *spanspb.SpanBatch) ([]byte, error) {
	if b == nil {
		return buf, nil // as proto.Marshal: no fields
	}
	if len(b.ProtoReflect().GetUnknown()) > 0 {
		return proto.MarshalOptions{}.MarshalAppend(buf, b)
	}
	for _, s := range b.Spans {
		if !plain(s) {
			return proto.MarshalOptions{}.MarshalAppend(buf, b)
		}
	}
	e := encoder{buf: buf}
	e.str(1, b.ProjectId)
	e.str(2, b.UserId)
	e.varint(3, uint64(b.ReceivedUnixNano))
	for _, s := range b.Spans {
		e.tag(4, protowire.BytesType)
		e.buf = protowire.AppendVarint(e.buf, uint64(spanSize(s)))
		e.span(s)
	}
	if e.bad {
		// Refused as proto.Marshal refuses it, with its error.
		return proto.MarshalOptions{}.MarshalAppend(buf, b)
	}
	return e.buf, nil
}

// plain says whether s and its messages carry no unknown fields.
func plain(s *spanspb.Span) bool {
	if s == nil || len(s.ProtoReflect().GetUnknown()) > 0 {
		return false
	}
	for _, e := range s.Events {
		if e == nil || len(e.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
	}
	for _, l := range s.Links {
		if l == nil || len(l.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
	}
	for _, r := range s.References {
		if r == nil || len(r.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
	}
	for _, h := range s.Hashes {
		if h == nil || len(h.ProtoReflect().GetUnknown()) > 0 {
			return false
		}
	}
	return true
}

type encoder struct {
	buf []byte
	bad bool // a string field was not UTF-8
}

func (e *encoder) tag(num protowire.Number, typ protowire.Type) {
	e.buf = protowire.AppendTag(e.buf, num, typ)
}

func (e *encoder) str(num protowire.Number, s string) {
	if s == "" {
		return
	}
	if !validUTF8(s) {
		e.bad = true
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendString(e.buf, s)
}

func (e *encoder) bytes(num protowire.Number, b []byte) {
	if len(b) == 0 {
		return
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendBytes(e.buf, b)
}

func (e *encoder) varint(num protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	e.tag(num, protowire.VarintType)
	e.buf = protowire.AppendVarint(e.buf, v)
}

func (e *encoder) boolean(num protowire.Number, v bool) {
	if v {
		e.varint(num, 1)
	}
}

func (e *encoder) message(num protowire.Number, size int) {
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendVarint(e.buf, uint64(size))
}

func (e *encoder) span(s *spanspb.Span) {
	e.str(1, s.TraceId)
	e.str(2, s.SpanId)
	e.str(3, s.ParentId)
	e.str(4, s.TraceType)
	e.str(5, s.SpanType)
	e.str(6, s.SpanKind)
	e.str(7, s.SpanName)
	e.varint(8, uint64(s.StartUnixMicro))
	e.varint(9, uint64(s.EndUnixMicro))
	e.str(10, s.StatusCode)
	e.str(11, s.StatusMessage)
	e.str(12, s.SessionId)
	e.str(13, s.UserId)
	e.str(14, s.AgentId)
	e.bytes(15, s.AttributesJson)
	for _, k := range s.AttrKeys {
		e.rep(16, k)
	}
	for _, v := range s.AttrValues {
		e.rep(17, v)
	}
	for _, ev := range s.Events {
		e.message(18, eventSize(ev))
		e.str(1, ev.Name)
		e.varint(2, uint64(ev.TimeUnixMicro))
		e.bytes(3, ev.AttributesJson)
	}
	for _, l := range s.Links {
		e.message(19, linkSize(l))
		e.str(1, l.TraceId)
		e.str(2, l.SpanId)
		e.str(3, l.Key)
		e.bytes(4, l.AttributesJson)
	}
	for _, r := range s.References {
		e.message(20, refSize(r))
		e.str(1, r.Key)
		e.str(2, r.Id)
		e.str(3, r.Slug)
		e.str(4, r.Version)
	}
	for _, h := range s.Hashes {
		e.message(21, hashSize(h))
		e.str(1, h.Id)
		e.str(2, h.Key)
	}
	e.boolean(22, s.Deleted)
	e.varint(23, uint64(s.CreatedUnixMicro))
	e.str(24, s.CreatedById)
	e.boolean(25, s.LinksSet)
	e.varint(26, uint64(int64(s.ExpiresUnixDay))) // int32: negative ones take ten bytes, as in proto.Marshal
}

// rep writes one element of a repeated string field: empty ones too.
func (e *encoder) rep(num protowire.Number, s string) {
	if !validUTF8(s) {
		e.bad = true
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendString(e.buf, s)
}

// Sizes of fields as written above: tag, length and bytes.
func sizeStr(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func sizeVarint(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func sizeMessage(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func sizeBool(num protowire.Number, v bool) int {
	if !v {
		return 0
	}
	return protowire.SizeTag(num) + 1
}

func spanSize(s *spanspb.Span) int {
	n := sizeStr(1, len(s.TraceId)) + sizeStr(2, len(s.SpanId)) + sizeStr(3, len(s.ParentId)) + sizeStr(4, len(s.TraceType)) +
		sizeStr(5, len(s.SpanType)) + sizeStr(6, len(s.SpanKind)) + sizeStr(7, len(s.SpanName)) +
		sizeVarint(8, uint64(s.StartUnixMicro)) + sizeVarint(9, uint64(s.EndUnixMicro)) +
		sizeStr(10, len(s.StatusCode)) + sizeStr(11, len(s.StatusMessage)) + sizeStr(12, len(s.SessionId)) +
		sizeStr(13, len(s.UserId)) + sizeStr(14, len(s.AgentId)) + sizeStr(15, len(s.AttributesJson)) +
		sizeBool(22, s.Deleted) + sizeVarint(23, uint64(s.CreatedUnixMicro)) + sizeStr(24, len(s.CreatedById)) +
		sizeBool(25, s.LinksSet) + sizeVarint(26, uint64(int64(s.ExpiresUnixDay)))
	for _, k := range s.AttrKeys {
		n += sizeMessage(16, len(k))
	}
	for _, v := range s.AttrValues {
		n += sizeMessage(17, len(v))
	}
	for _, ev := range s.Events {
		n += sizeMessage(18, eventSize(ev))
	}
	for _, l := range s.Links {
		n += sizeMessage(19, linkSize(l))
	}
	for _, r := range s.References {
		n += sizeMessage(20, refSize(r))
	}
	for _, h := range s.Hashes {
		n += sizeMessage(21, hashSize(h))
	}
	return n
}

func eventSize(e *spanspb.Event) int {
	return sizeStr(1, len(e.Name)) + sizeVarint(2, uint64(e.TimeUnixMicro)) + sizeStr(3, len(e.AttributesJson))
}

func linkSize(l *spanspb.Link) int {
	return sizeStr(1, len(l.TraceId)) + sizeStr(2, len(l.SpanId)) + sizeStr(3, len(l.Key)) + sizeStr(4, len(l.AttributesJson))
}

func refSize(r *spanspb.Reference) int {
	return sizeStr(1, len(r.Key)) + sizeStr(2, len(r.Id)) + sizeStr(3, len(r.Slug)) + sizeStr(4, len(r.Version))
}

func hashSize(h *spanspb.Hash) int {
	return sizeStr(1, len(h.Id)) + sizeStr(2, len(h.Key))
}

func validUTF8(s string) bool { return utf8.ValidString(s) }
