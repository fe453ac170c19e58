package chspans

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/internal/jsontext"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Encode is s as it travels to the writer, within lim (the normaliser's
// LimitsInForce). The raw pass bounded what the client sent, but the
// canonical attributes can outgrow it (adapters parse JSON text into new
// structure, canonical paths are longer): the encoder notices, and they are
// trimmed, the cut recorded and encoded again. The error is a
// *spanmodel.LimitError (the span is over MaxBytes, or Strict and over a
// limit): the span is rejected alone. size is the span's encoded size.
func Encode(s *spanmodel.Span, lim *spanmodel.Limits, created time.Time, createdBy string) (p *spanspb.Span, size int, err error) {
	p, err = encode(s, created, createdBy, lim, true)
	if errors.Is(err, errOverLimit) {
		if err := s.FitAttributes(lim); err != nil {
			return nil, 0, err
		}
		p, err = encode(s, created, createdBy, lim, true)
	}
	return fit(p, err, lim)
}

// ErrMustTrim is EncodeShared's answer for a span whose attributes must be
// trimmed first: Encode it, one span at a time.
var ErrMustTrim = errors.New("the span's attributes must be trimmed first")

// EncodeShared is Encode for spans encoded side by side, which may share
// values (the lists of an OTLP resource's attributes): it never changes s,
// and answers ErrMustTrim where Encode would trim s's attributes.
func EncodeShared(s *spanmodel.Span, lim *spanmodel.Limits, created time.Time, createdBy string) (p *spanspb.Span, size int, err error) {
	p, err = encode(s, created, createdBy, lim, false)
	if errors.Is(err, errOverLimit) {
		return nil, 0, ErrMustTrim
	}
	return fit(p, err, lim)
}

// fit is Encode's answer for the encoding p, err of a span: its size, or
// the error rejecting it.
func fit(p *spanspb.Span, err error, lim *spanmodel.Limits) (*spanspb.Span, int, error) {
	switch {
	case errors.Is(err, errTooBig):
		return nil, 0, &spanmodel.LimitError{Msg: fmt.Sprintf("the span encodes to more than TRACING_SPAN_MAX_BYTES (%d bytes)", lim.MaxBytes)}
	case errors.Is(err, ErrMustTrim):
		return nil, 0, err
	case err != nil:
		return nil, 0, &spanmodel.LimitError{Msg: fmt.Sprintf("the span is over its limits once normalised: %v", err)}
	}
	size := encodedSize(p)
	if size > lim.MaxBytes {
		return nil, 0, &spanmodel.LimitError{Msg: fmt.Sprintf("the span encodes to about %d bytes, more than TRACING_SPAN_MAX_BYTES (%d bytes)", size, lim.MaxBytes)}
	}
	return p, size, nil
}

// encodedSize bounds p's protobuf size from above, cheaply (proto.Size is
// a walk as costly as a good part of the marshalling): each string or
// bytes field costs its length and at most 7 bytes of tag and length, each
// nested message 7 more, the scalars 64 in all.
func encodedSize(p *spanspb.Span) int {
	const field = 7
	n := 64 + len(p.AttributesJson) + field
	for _, s := range [...]string{p.TraceId, p.SpanId, p.ParentId, p.TraceType, p.SpanType, p.SpanKind, p.SpanName,
		p.StatusCode, p.StatusMessage, p.SessionId, p.UserId, p.AgentId, p.CreatedById} {
		n += len(s) + field
	}
	for _, s := range p.AttrKeys {
		n += len(s) + field
	}
	for _, s := range p.AttrValues {
		n += len(s) + field
	}
	for _, e := range p.Events {
		n += 3*field + 11 + len(e.Name) + len(e.AttributesJson)
	}
	for _, l := range p.Links {
		n += 5*field + len(l.TraceId) + len(l.SpanId) + len(l.Key) + len(l.AttributesJson)
	}
	for _, r := range p.References {
		n += 5*field + len(r.Key) + len(r.Id) + len(r.Slug) + len(r.Version)
	}
	for _, h := range p.Hashes {
		n += 3*field + len(h.Id) + len(h.Key)
	}
	return n
}

// valid is s as a protobuf string must be: UTF-8. The fields it guards
// come from attribute values, whose UTF-8 the encoder checks only where
// it writes them.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Proto is s as it travels to the writer, without limits (tools and
// benchmarks; ingest uses Encode).
func Proto(s *spanmodel.Span, created time.Time, createdBy string) *spanspb.Span {
	p, _ := encode(s, created, createdBy, nil, true)
	return p
}

// encode encodes s; with lim, an error says the attributes are over a limit.
// Unless it may trim, it answers ErrMustTrim rather than change s.
func encode(s *spanmodel.Span, created time.Time, createdBy string, lim *spanmodel.Limits, mayTrim bool) (*spanspb.Span, error) {
	attrs, keys, values, err := encodeAttributes(s.Attributes, lim)
	if errors.Is(err, errOverLimit) || errors.Is(err, errTooBig) {
		return nil, err
	}
	if err != nil {
		if lim != nil && !mayTrim {
			return nil, ErrMustTrim
		}
		// What encoding/json refuses (an infinite cost computed from huge
		// token counts) is stored as no attributes JSON, with the leaves.
		if lim != nil {
			s.CutAttributes(lim)
		}
		attrs = nil
		keys, values = spanmodel.Flatten(s.Attributes)
		for i, v := range values {
			values[i] = unmark(v)
		}
	}
	p := &spanspb.Span{
		TraceId: s.TraceID, SpanId: s.SpanID, ParentId: s.ParentID,
		TraceType: s.TraceType, SpanType: s.SpanType, SpanKind: s.SpanKind, SpanName: s.SpanName,
		StartUnixMicro: s.Start.UnixMicro(), EndUnixMicro: s.End.UnixMicro(),
		StatusCode: s.StatusCode, StatusMessage: s.StatusMessage,
		SessionId: valid(s.SessionID), UserId: valid(s.UserID), AgentId: valid(s.AgentID),
		AttributesJson: attrs, AttrKeys: keys, AttrValues: values,
		LinksSet: s.LinksSet, CreatedUnixMicro: created.UnixMicro(), CreatedById: createdBy,
	}
	for _, e := range s.Events {
		a, _ := jsontext.Marshal(e.Attributes)
		p.Events = append(p.Events, &spanspb.Event{Name: e.Name, TimeUnixMicro: e.Time.UnixMicro(), AttributesJson: a})
	}
	for _, l := range s.Links {
		var a []byte
		if len(l.Attributes) > 0 {
			a, _ = jsontext.Marshal(l.Attributes)
		}
		p.Links = append(p.Links, &spanspb.Link{TraceId: l.TraceID, SpanId: l.SpanID, Key: valid(l.Key), AttributesJson: a})
	}
	for _, r := range s.References {
		p.References = append(p.References, &spanspb.Reference{Key: valid(r.Key), Id: valid(r.ID), Slug: valid(r.Slug), Version: valid(r.Version)})
	}
	for _, h := range s.Hashes {
		p.Hashes = append(p.Hashes, &spanspb.Hash{Id: h.ID, Key: valid(h.Key)})
	}
	return p, nil
}
