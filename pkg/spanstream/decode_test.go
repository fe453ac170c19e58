package spanstream

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// fullBatch sets every field of every message.
func fullBatch(spans int) *spanspb.SpanBatch {
	b := &spanspb.SpanBatch{ProjectId: "p", UserId: "u", ReceivedUnixNano: 1<<62 + 3}
	for i := range spans {
		b.Spans = append(b.Spans, &spanspb.Span{
			TraceId: "0af7651916cd43dd8448eb211c80319c", SpanId: "b7ad6b7169203331", ParentId: "00000000000000a1",
			TraceType: "invocation", SpanType: "chat", SpanKind: "SPAN_KIND_CLIENT", SpanName: "llm.call ✓",
			StartUnixMicro: -5, EndUnixMicro: int64(i) << 40, StatusCode: "STATUS_CODE_ERROR", StatusMessage: "boom",
			SessionId: "s", UserId: "u2", AgentId: "a", AttributesJson: []byte(`{"a":` + strings.Repeat("1", i) + `1}`),
			AttrKeys: []string{"a", "", "b.c"}, AttrValues: []string{"1", "", "\uffff\x002"},
			Events:     []*spanspb.Event{{Name: "exception", TimeUnixMicro: 7, AttributesJson: []byte(`{}`)}, {}},
			Links:      []*spanspb.Link{{TraceId: "t", SpanId: "s", Key: "k", AttributesJson: []byte(`{"key":"k"}`)}},
			References: []*spanspb.Reference{{Key: "application", Id: "i", Slug: "sl", Version: "3"}},
			Hashes:     []*spanspb.Hash{{Id: "h", Key: "indirect"}},
			Deleted:    i%2 == 0, CreatedUnixMicro: 9, CreatedById: "c", LinksSet: true, ExpiresUnixDay: -2,
		})
	}
	return b
}

// TestDecodeBatchIsProtoUnmarshal: the writer's decoder reads exactly what
// the generic one reads, compressed or not, with unknown fields skipped.
func TestDecodeBatchIsProtoUnmarshal(t *testing.T) {
	for _, n := range []int{0, 1, 3, 200} { // 200 spans: over compressFrom, compressed
		want := fullBatch(n)
		data, err := EncodeBatch(want)
		if err != nil {
			t.Fatal(err)
		}
		got, size, err := DecodeBatchSize(data)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("%d spans: decoded batch differs", n)
		}
		// A batch encoded in parts repeats its other fields in each.
		wantSize := proto.Size(want)
		if parts := min(runtime.GOMAXPROCS(0), n/minPartSpans); parts > 1 {
			wantSize += (parts - 1) * proto.Size(&spanspb.SpanBatch{ProjectId: want.ProjectId, UserId: want.UserId, ReceivedUnixNano: want.ReceivedUnixNano})
		}
		if size != wantSize {
			t.Fatalf("%d spans: size %d, want %d", n, size, wantSize)
		}
	}
	// A field of a later schema, and a known field of another wire type,
	// are skipped, as proto.Unmarshal (DiscardUnknown) skips them.
	raw, _ := proto.Marshal(fullBatch(1))
	raw = protowire.AppendTag(raw, 99, protowire.BytesType)
	raw = protowire.AppendString(raw, "later")
	raw = protowire.AppendTag(raw, 1, protowire.VarintType)
	raw = protowire.AppendVarint(raw, 5)
	got, err := DecodeBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, fullBatch(1)) {
		t.Fatal("unknown fields changed the batch")
	}
}

// TestDecodeBatchRefusesInvalidUTF8: as proto.Unmarshal does, so a batch
// the generic decoder refused is still dead-lettered, not inserted.
func TestDecodeBatchRefusesInvalidUTF8(t *testing.T) {
	raw := protowire.AppendTag(nil, 1, protowire.BytesType)
	raw = protowire.AppendString(raw, "p\xff")
	if _, err := DecodeBatch(raw); err == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
	if err := proto.Unmarshal(raw, &spanspb.SpanBatch{}); err == nil {
		t.Fatal("the generic decoder accepts it: the test no longer says anything")
	}
}

// FuzzDecodeBatch: on any input the writer's decoder agrees with
// proto.Unmarshal, in error and in result.
func FuzzDecodeBatch(f *testing.F) {
	for _, n := range []int{0, 1, 2} {
		raw, _ := proto.Marshal(fullBatch(n))
		f.Add(raw)
	}
	f.Add([]byte{0x22, 0x02, 0x08})
	f.Fuzz(func(t *testing.T, data []byte) {
		var want spanspb.SpanBatch
		werr := proto.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, &want)
		var got spanspb.SpanBatch
		in := bytes.Clone(data)
		gerr := unmarshalBatch(in, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("proto.Unmarshal: %v; unmarshalBatch: %v", werr, gerr)
		}
		if werr == nil && !proto.Equal(&got, &want) {
			t.Fatalf("decoded batches differ:\n%v\n%v", &got, &want)
		}
		if werr != nil {
			return
		}
		// And the encoder writes what proto.Marshal writes.
		wb, werr := proto.Marshal(&want)
		gb, gerr := appendBatch(nil, &want)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(wb, gb) {
			t.Fatalf("appendBatch differs from proto.Marshal (%v, %v)", werr, gerr)
		}
	})
}

// TestAppendBatchIsProtoMarshal: the encoder's bytes are proto.Marshal's,
// and a string that is not UTF-8 is refused as proto.Marshal refuses it.
func TestAppendBatchIsProtoMarshal(t *testing.T) {
	if got, err := appendBatch(nil, nil); err != nil || len(got) != 0 {
		t.Fatal("a nil batch is not empty")
	}
	for _, n := range []int{0, 1, 3} {
		b := fullBatch(n)
		want, err := proto.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendBatch([]byte("x"), b)
		if err != nil || !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("%d spans: appendBatch differs from proto.Marshal (%v)", n, err)
		}
	}
	b := fullBatch(2)
	b.Spans[1].AttrValues[1] = "\xff"
	if _, err := appendBatch(nil, b); err == nil {
		t.Fatal("invalid UTF-8 marshalled")
	}
	b = fullBatch(1)
	b.Spans[0].ExpiresUnixDay = -1 // ten bytes, as proto.Marshal writes a negative int32
	want, _ := proto.Marshal(b)
	if got, _ := appendBatch(nil, b); !bytes.Equal(got, want) {
		t.Fatal("negative int32 written differently")
	}
}
