package otlpserver

import (
	"context"
	"crypto/sha256"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
)

// bodyKeys hands the key of each gRPC request's body (a hash of the bytes
// received, as the HTTP transport keys a request by its body) from the
// codec, which sees the bytes, to the handler, which sees only the decoded
// request: JetStream's duplicate detection then stores a retried export
// once without re-marshalling every request to get its bytes back, which
// cost the gRPC transport what decoding costs. The codec keys the request
// it filled, and the interceptor, which gets that very request, moves the
// key into its context.
type bodyKeys struct {
	delegate encoding.CodecV2 // the registered proto codec (pdata's)
	keys     sync.Map         // decoded request → []byte
}

func newBodyKeys() *bodyKeys {
	return &bodyKeys{delegate: encoding.GetCodecV2("proto")}
}

func (b *bodyKeys) Name() string { return b.delegate.Name() }

func (b *bodyKeys) Marshal(v any) (mem.BufferSlice, error) { return b.delegate.Marshal(v) }

func (b *bodyKeys) Unmarshal(data mem.BufferSlice, v any) error {
	if err := b.delegate.Unmarshal(data, v); err != nil {
		return err
	}
	h := sha256.New()
	for _, buf := range data {
		h.Write(buf.ReadOnlyData())
	}
	b.keys.Store(v, h.Sum(nil))
	return nil
}

// serverOptions install the codec and the interceptor.
func (b *bodyKeys) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(b), grpc.ChainUnaryInterceptor(b.intercept)}
}

func (b *bodyKeys) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if k, ok := b.keys.LoadAndDelete(req); ok {
		ctx = context.WithValue(ctx, bodyKeyCtx{}, k)
	}
	return handler(ctx, req)
}

type bodyKeyCtx struct{}

// bodyKey is the key of the request being handled, nil if none.
func bodyKey(ctx context.Context) []byte {
	k, _ := ctx.Value(bodyKeyCtx{}).([]byte)
	return k
}
