package spanstream

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// TestEncodeBatchRefusesWhatTheWriterCannotDecode: a batch over the limit
// is refused by the encoder (the spans below share one buffer; only the
// marshalled batch is allocated).
func TestEncodeBatchRefusesWhatTheWriterCannotDecode(t *testing.T) {
	blob := make([]byte, 1<<20)
	b := &spanspb.SpanBatch{ProjectId: "p"}
	for range MaxBatchBytes>>20 + 1 {
		b.Spans = append(b.Spans, &spanspb.Span{AttributesJson: blob})
	}
	if _, err := EncodeBatch(b); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("got %v, want ErrBatchTooLarge", err)
	}
}

// TestBatchAtTheLimitRoundTrips: what the encoder accepts, the writer's
// decoder decodes, up to the last byte of the limit.
func TestBatchAtTheLimitRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GiB")
	}
	sp := &spanspb.Span{}
	b := &spanspb.SpanBatch{Spans: []*spanspb.Span{sp}}
	n := MaxBatchBytes - 16
	for i := 0; i < 3; i++ { // the length prefixes depend on the length
		sp.AttributesJson = make([]byte, n)
		n += MaxBatchBytes - proto.Size(b)
	}
	sp.AttributesJson = make([]byte, n)
	if got := proto.Size(b); got != MaxBatchBytes {
		t.Fatalf("batch of %d bytes, want exactly %d", got, MaxBatchBytes)
	}
	data, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(data)
	if err != nil {
		t.Fatalf("the writer cannot decode a batch the encoder accepted: %v", err)
	}
	if len(got.Spans) != 1 || len(got.Spans[0].AttributesJson) != n {
		t.Fatal("the batch changed on the way")
	}
}
