package ingest

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Limits bound an OTLP request body. Variables: TRACING_OTLP_*.
type Limits struct {
	MaxBody         int64 `split_words:"true" default:"10485760" desc:"largest OTLP request body as sent (possibly compressed), in bytes; larger → 413"`
	MaxDecompressed int64 `split_words:"true" default:"10485760" desc:"largest OTLP request body after decompression, in bytes (HTTP gzip, zstd, deflate; gRPC gzip and the gRPC message bound); larger → 413, or RESOURCE_EXHAUSTED over gRPC"`
}

// ErrTooLarge is a body over a limit.
var ErrTooLarge = errs.New(errs.TooLarge, "tracing.body_too_large", "request body exceeds the size limit")

// ReadBody reads a request body within the limits, decompressing gzip,
// zstd or deflate as Content-Encoding says, or as the first bytes show when
// it says nothing (some SDKs compress without the header).
func ReadBody(r io.Reader, encoding string, lim Limits) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, lim.MaxBody+1))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, "tracing.unreadable_body", err)
	}
	if int64(len(raw)) > lim.MaxBody {
		return nil, errs.New(errs.TooLarge, ErrTooLarge.Code, fmt.Sprintf("request body exceeds %d bytes", lim.MaxBody))
	}
	enc := strings.ToLower(strings.TrimSpace(encoding))
	if enc == "" || enc == "identity" {
		switch {
		case len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b:
			enc = "gzip"
		case len(raw) >= 4 && bytes.Equal(raw[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
			enc = "zstd"
		case len(raw) >= 2 && raw[0] == 0x78 && (raw[1] == 0x01 || raw[1] == 0x9c || raw[1] == 0xda):
			enc = "deflate"
		default:
			return raw, nil
		}
	}
	var dr io.Reader
	switch enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, "tracing.bad_gzip", fmt.Errorf("gzip body: %w", err))
		}
		dr = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderMaxMemory(uint64(lim.MaxDecompressed)+1), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, "tracing.bad_zstd", fmt.Errorf("zstd body: %w", err))
		}
		defer zr.Close()
		dr = zr
	case "deflate":
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, "tracing.bad_deflate", fmt.Errorf("deflate body: %w", err))
		}
		dr = zr
	default:
		return nil, errs.New(errs.Invalid, "tracing.bad_encoding", fmt.Sprintf("Content-Encoding %q is not gzip, zstd or deflate", encoding))
	}
	out, err := io.ReadAll(io.LimitReader(dr, lim.MaxDecompressed+1))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, "tracing.bad_compression", fmt.Errorf("decompress %s body: %w", enc, err))
	}
	if int64(len(out)) > lim.MaxDecompressed {
		return nil, errs.New(errs.TooLarge, ErrTooLarge.Code, fmt.Sprintf("decompressed request body exceeds %d bytes", lim.MaxDecompressed))
	}
	return out, nil
}

// IsJSON says whether a content type is OTLP/JSON rather than protobuf.
func IsJSON(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/json")
}

// DecodeOTLP decodes an ExportTraceServiceRequest (protobuf or OTLP/JSON)
// with the collector's pdata, the only decoder that reads OTLP/JSON's hex ids
// correctly.
func DecodeOTLP(body []byte, json bool) (ptrace.Traces, error) {
	req := ptraceotlp.NewExportRequest()
	var err error
	if json {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return ptrace.Traces{}, errs.WithDetail(errs.Invalid, "tracing.bad_otlp", "malformed OTLP body",
			fmt.Sprintf("the body is not an OTLP ExportTraceServiceRequest (%s): %v", map[bool]string{true: "JSON", false: "protobuf"}[json], err))
	}
	return req.Traces(), nil
}

// RawSpans converts OTLP traces into raw spans for normalisation.
func RawSpans(td ptrace.Traces) []spanmodel.Raw {
	raws := make([]spanmodel.Raw, 0, td.SpanCount())
	var ids hexCache
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resource := rs.Resource().Attributes().AsRaw()
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				raws = append(raws, rawSpan(spans.At(k), resource, ss.Scope(), &ids))
			}
		}
	}
	return raws
}

// hexCache remembers the last trace and parent id converted: the spans of
// a request mostly share them, and each conversion allocates.
type hexCache struct {
	trace                 pcommon.TraceID
	traceHex              string
	parent                pcommon.SpanID
	parentHex             string
	haveTrace, haveParent bool
}

func (c *hexCache) traceID(id pcommon.TraceID) string {
	if !c.haveTrace || id != c.trace {
		c.trace, c.traceHex, c.haveTrace = id, traceHex(id), true
	}
	return c.traceHex
}

func (c *hexCache) parentID(id pcommon.SpanID) string {
	if !c.haveParent || id != c.parent {
		c.parent, c.parentHex, c.haveParent = id, spanHex(id), true
	}
	return c.parentHex
}

func rawSpan(sp ptrace.Span, resource map[string]any, scope pcommon.InstrumentationScope, ids *hexCache) spanmodel.Raw {
	r := spanmodel.Raw{
		TraceID:       ids.traceID(sp.TraceID()),
		SpanID:        spanHex(sp.SpanID()),
		Name:          sp.Name(),
		Kind:          strconv.Itoa(int(sp.Kind())),
		StatusCode:    strconv.Itoa(int(sp.Status().Code())),
		StatusMessage: sp.Status().Message(),
		Attributes:    sp.Attributes().AsRaw(),
		OTLP:          true,
		Resource:      resource,
		ScopeName:     scope.Name(),
		ScopeVersion:  scope.Version(),
	}
	if !sp.ParentSpanID().IsEmpty() {
		r.ParentID = ids.parentID(sp.ParentSpanID())
	}
	if sp.StartTimestamp() != 0 {
		r.Start = sp.StartTimestamp().AsTime()
	}
	if sp.EndTimestamp() != 0 {
		r.End = sp.EndTimestamp().AsTime()
	}
	evs := sp.Events()
	for i := 0; i < evs.Len(); i++ {
		e := evs.At(i)
		re := spanmodel.RawEvent{Name: e.Name(), Attributes: e.Attributes().AsRaw()}
		if e.Timestamp() != 0 {
			re.Time = e.Timestamp().AsTime()
		}
		r.Events = append(r.Events, re)
	}
	links := sp.Links()
	for i := 0; i < links.Len(); i++ {
		l := links.At(i)
		r.Links = append(r.Links, spanmodel.RawLink{TraceID: traceHex(l.TraceID()), SpanID: spanHex(l.SpanID()), Attributes: l.Attributes().AsRaw()})
	}
	// pdata's int64 and []byte values become JSON numbers and hex in the
	// normaliser's first pass, with the span limits: no walk here of
	// values that may nest 100,000 deep.
	return r
}

func traceHex(id pcommon.TraceID) string {
	if id.IsEmpty() {
		return ""
	}
	return hex.EncodeToString(id[:])
}

func spanHex(id pcommon.SpanID) string {
	if id.IsEmpty() {
		return ""
	}
	return hex.EncodeToString(id[:])
}

// Response is the OTLP answer: empty on full success, partial success
// naming how many spans were rejected and why otherwise.
func Response(rejected []spanmodel.Error, json bool) ([]byte, error) {
	resp := ptraceotlp.NewExportResponse()
	if len(rejected) > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedSpans(int64(len(rejected)))
		msgs := make([]string, 0, 3)
		for i, r := range rejected {
			if i == 3 {
				msgs = append(msgs, fmt.Sprintf("and %d more", len(rejected)-3))
				break
			}
			msgs = append(msgs, r.Error())
		}
		// A reason may quote what the client sent; protobuf strings must be UTF-8.
		ps.SetErrorMessage(strings.ToValidUTF8(strings.Join(msgs, "; "), "\uFFFD"))
	}
	if json {
		return resp.MarshalJSON()
	}
	return resp.MarshalProto()
}
