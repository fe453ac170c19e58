package otlpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// keyRecorder is a trace service that records the body key its handler
// gets.
type keyRecorder struct {
	ptraceotlp.UnimplementedGRPCServer
	keys chan []byte
	raws chan []spanmodel.Raw
}

func (k *keyRecorder) Export(ctx context.Context, _ ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	k.keys <- bodyKey(ctx)
	raws, ok := bodyRaws(ctx)
	if !ok {
		raws = nil
	}
	k.raws <- raws
	return ptraceotlp.NewExportResponse(), nil
}

// TestBodyKeysReachTheHandler: over a real gRPC connection, the handler
// gets the hash of the very bytes the client sent, for each request, and
// the raw spans of pdata's decoding of them; the codec keeps nothing once
// a request is handled.
func TestBodyKeysReachTheHandler(t *testing.T) {
	bk := newBodyKeys()
	srv := grpc.NewServer(bk.serverOptions()...)
	rec := &keyRecorder{keys: make(chan []byte, 2), raws: make(chan []spanmodel.Raw, 2)}
	ptraceotlp.RegisterGRPCServer(srv, rec)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	client := ptraceotlp.NewGRPCClient(cc)
	for _, name := range []string{"one", "two"} {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetName(name)
		sp.Attributes().PutStr("gen_ai.request.model", name)
		sp.Attributes().PutEmptySlice("list").AppendEmpty().SetInt(300)
		req := ptraceotlp.NewExportRequestFromTraces(td)
		body, err := req.MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Export(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(body)
		if got := <-rec.keys; !bytes.Equal(got, want[:]) {
			t.Fatalf("%s: handler got key %x, want %x", name, got, want)
		}
		got := <-rec.raws
		if got == nil {
			t.Fatalf("%s: the codec left the request to pdata", name)
		}
		if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", ingest.RawSpans(td)); g != w {
			t.Fatalf("%s: handler got raw spans\n%s\nwant\n%s", name, g, w)
		}
	}
	n := 0
	bk.keys.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("%d keys stay in the codec after their requests", n)
	}
}
