package otlpserver

import (
	"context"
	"crypto/sha256"
	"reflect"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// bodyKeys hands the key of each gRPC request's body (a hash of the bytes
// received, as the HTTP transport keys a request by its body) from the
// codec, which sees the bytes, to the handler, which sees only the decoded
// request: JetStream's duplicate detection then stores a retried export
// once without re-marshalling every request to get its bytes back, which
// cost the gRPC transport what decoding costs. The codec keys the request
// it filled, and the interceptor, which gets that very request, moves the
// key into its context.
//
// The codec also decodes a trace export request itself, straight into raw
// spans (ingest.DecodeOTLPProto, as the HTTP transport does): pdata's
// request is then left empty and the handler takes the raw spans from its
// context. A body the wire decoder refuses is handed to pdata's codec,
// which refuses it too (FuzzDecodeOTLPProto), so a client sees the very
// error it saw before.
type bodyKeys struct {
	delegate encoding.CodecV2 // the registered proto codec (pdata's)
	keys     sync.Map         // decoded request → *decoded
	traceReq reflect.Type     // the message type of a trace export request; nil: never decoded here
}

// decoded is what the codec learnt of one request.
type decoded struct {
	key  []byte
	raws []spanmodel.Raw // nil: pdata decoded the request
}

func newBodyKeys() *bodyKeys {
	b := &bodyKeys{delegate: encoding.GetCodecV2("proto")}
	// The message grpc decodes a trace export into is the request's
	// unexported orig field (pdata's internal type); if pdata changes
	// that, pdata decodes every request, as before.
	if f, ok := reflect.TypeOf(ptraceotlp.ExportRequest{}).FieldByName("orig"); ok {
		b.traceReq = f.Type
	}
	return b
}

func (b *bodyKeys) Name() string { return b.delegate.Name() }

func (b *bodyKeys) Marshal(v any) (mem.BufferSlice, error) { return b.delegate.Marshal(v) }

func (b *bodyKeys) Unmarshal(data mem.BufferSlice, v any) error {
	h := sha256.New()
	for _, buf := range data {
		h.Write(buf.ReadOnlyData())
	}
	d := &decoded{key: h.Sum(nil)}
	if b.traceReq != nil && reflect.TypeOf(v) == b.traceReq {
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		raws, err := ingest.DecodeOTLPProto(buf.ReadOnlyData()) // copies what it keeps
		buf.Free()
		if err == nil {
			d.raws = raws
			b.keys.Store(v, d)
			return nil
		}
	}
	if err := b.delegate.Unmarshal(data, v); err != nil {
		return err
	}
	b.keys.Store(v, d)
	return nil
}

// serverOptions install the codec and the interceptor.
func (b *bodyKeys) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(b), grpc.ChainUnaryInterceptor(b.intercept)}
}

func (b *bodyKeys) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if d, ok := b.keys.LoadAndDelete(req); ok {
		ctx = context.WithValue(ctx, bodyKeyCtx{}, d)
	}
	return handler(ctx, req)
}

type bodyKeyCtx struct{}

// bodyKey is the key of the request being handled, nil if none.
func bodyKey(ctx context.Context) []byte {
	if d, _ := ctx.Value(bodyKeyCtx{}).(*decoded); d != nil {
		return d.key
	}
	return nil
}

// bodyRaws are the raw spans the codec decoded for the request being
// handled; ok is false when pdata decoded it (the request holds them).
func bodyRaws(ctx context.Context) (raws []spanmodel.Raw, ok bool) {
	if d, _ := ctx.Value(bodyKeyCtx{}).(*decoded); d != nil && d.raws != nil {
		return d.raws, true
	}
	return nil, false
}
