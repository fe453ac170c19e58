package spanstream

import (
	"bytes"
	"testing"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// TestBatchSizeIsTheDecodedSize: the size the writer counts before decoding
// is the size DecodeBatchSize reports after, compressed or not; a message
// that is not a batch counts as its bytes, a zstd frame that hides its size
// as the most a batch may take.
func TestBatchSizeIsTheDecodedSize(t *testing.T) {
	for _, spans := range []int{1, 500} {
		b := &spanspb.SpanBatch{ProjectId: "p"}
		for range spans {
			b.Spans = append(b.Spans, &spanspb.Span{TraceId: "t", AttributesJson: bytes.Repeat([]byte(`{"a":"b"}`), 20)})
		}
		data, err := EncodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		_, n, err := DecodeBatchSize(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := BatchSize(data); got != n {
			t.Fatalf("%d spans (%d bytes on the wire): BatchSize %d, decoded %d", spans, len(data), got, n)
		}
	}
	if got := BatchSize([]byte("not a span batch")); got != 16 {
		t.Fatalf("plain bytes: %d, want 16", got)
	}
	if got := BatchSize(append(bytes.Clone(zstdMagic), 0)); got != MaxBatchBytes {
		t.Fatalf("frame without its size: %d, want %d", got, MaxBatchBytes)
	}
}
