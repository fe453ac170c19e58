package ingest_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// msg builds a protobuf message from fields: each is (number, value), the
// value a []byte or string (length-delimited), a uint64 (varint), or a
// fixed64/fixed32.
type fixed64 uint64
type fixed32 uint32

func msg(kv ...any) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		n := protowire.Number(kv[i].(int))
		switch v := kv[i+1].(type) {
		case []byte:
			b = protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v)
		case string:
			b = protowire.AppendString(protowire.AppendTag(b, n, protowire.BytesType), v)
		case uint64:
			b = protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
		case int:
			b = protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), uint64(v))
		case fixed64:
			b = protowire.AppendFixed64(protowire.AppendTag(b, n, protowire.Fixed64Type), uint64(v))
		case fixed32:
			b = protowire.AppendFixed32(protowire.AppendTag(b, n, protowire.Fixed32Type), uint32(v))
		}
	}
	return b
}

// wireSeeds are requests that use what pdata's decoding does beyond the
// plain case: every value type, a key and a value sent twice, a message
// field sent twice (merged), the deprecated scope spans, unknown fields
// and groups, ids of the wrong length.
func wireSeeds() [][]byte {
	tid := []byte("0123456789abcdef")
	sid := []byte("01234567")
	kv := func(k string, v []byte) []byte { return msg(1, k, 2, v) }
	values := [][]byte{
		kv("s", msg(1, "text")), kv("b", msg(2, 1)), kv("i", msg(3, uint64(math.MaxUint64))),
		kv("d", msg(4, fixed64(math.Float64bits(1.5)))), kv("nan", msg(4, fixed64(math.Float64bits(math.NaN())))),
		kv("arr", msg(5, msg(1, msg(1, "x"), 1, msg(3, 7), 1, []byte{}))), kv("emptyarr", msg(5, []byte{})),
		kv("map", msg(6, msg(1, kv("a.b", msg(1, "c")), 1, kv("a.b", msg(3, 2))))), kv("bytes", msg(7, []byte{1, 2})),
		kv("nobytes", msg(7, []byte{})), kv("strindex", msg(8, 3)), kv("empty", []byte{}),
		msg(1, "twice", 2, msg(1, "first"), 2, []byte{}, 1, "twice2"), msg(1, "merged", 2, msg(1, "a"), 2, msg(3, 1)),
		msg(3, 9), kv("dup", msg(1, "one")), kv("dup", msg(1, "two")),
	}
	var attrs []any
	for _, v := range values {
		attrs = append(attrs, 9, v)
	}
	span := msg(append([]any{1, tid, 2, sid, 3, "state", 4, sid, 5, "name", 6, 3, 7, fixed64(1e18), 8, fixed64(2e18),
		10, 1, 11, msg(1, fixed64(5), 2, "exception", 3, kv("exception.type", msg(1, "E"))), 11, []byte{}, 12, 1,
		13, msg(1, tid, 2, sid, 3, "ts", 4, kv("key", msg(1, "k")), 5, 1, 6, fixed32(1)), 13, []byte{}, 14, 2,
		15, msg(2, "bad", 3, 2), 15, msg(3, 1), 16, fixed32(1), 99, "unknown"}, attrs...)...)
	zeroIDs := msg(1, make([]byte, 16), 2, make([]byte, 8), 4, make([]byte, 8), 6, uint64(1<<40), 15, msg(3, uint64(1<<33)))
	scope := msg(1, "scope", 2, "1.0", 3, kv("ignored", msg(1, "x")), 4, 1)
	resource := msg(1, kv("service.name", msg(1, "svc")), 2, 0, 3, msg(1, "url", 2, "type", 3, "id", 4, "desc"))
	rs := msg(1, resource, 2, msg(1, scope, 2, span, 2, zeroIDs, 3, "schema"), 1, msg(1, kv("second", msg(3, 1))), 2, msg(2, span), 3, "url",
		1000, msg(2, span))
	deprecatedOnly := msg(1, resource, 1000, msg(1, scope, 2, span))
	group := []byte{0x9b, 0x06, 0x08, 0x01, 0x9c, 0x06} // field 99 as a group, a varint inside
	var out [][]byte
	out = append(out,
		msg(1, rs), msg(1, rs, 1, deprecatedOnly, 1, []byte{}), msg(1, deprecatedOnly),
		append(msg(1, rs), group...), msg(2, "unknown top-level"), nil, []byte{},
		msg(1, msg(2, msg(2, msg(1, []byte("short"))))),             // a trace id of 5 bytes
		msg(1, msg(2, msg(2, msg(9, msg(2, msg(5, msg(1, "x"))))))), // wrong wire type deep inside (array of a string)
		msg(1, msg(2, msg(2, msg(5, uint64(1))))),                   // name as a varint
		[]byte{0x0a, 0x05, 0x01},                                    // length past the end
		[]byte{0x0c},                                                // end of group without a start
		[]byte{0x00, 0x01},                                          // field 0
	)
	return out
}

// FuzzDecodeOTLPProto holds the wire decoder to pdata's: on any body, an
// error exactly when pdata errs, else the same raw spans (RawSpans of
// pdata's traces), spans of one resource sharing its attributes map as
// they do there.
func FuzzDecodeOTLPProto(f *testing.F) {
	for _, td := range otlpSeeds() {
		pb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pb)
	}
	for _, b := range wireSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ingest.DecodeOTLPProto(body)
		td, perr := ingest.DecodeOTLP(body, false)
		if (err == nil) != (perr == nil) {
			t.Fatalf("wire decoder error %v, pdata error %v", err, perr)
		}
		if err != nil {
			requireClientError(t, "decode", err)
			return
		}
		want := ingest.RawSpans(td)
		if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
			t.Fatalf("raw spans differ:\nwire  %s\npdata %s", g, w)
		}
		for i := 1; i < len(got); i++ {
			if sameMap(got[i].Resource, got[i-1].Resource) != sameMap(want[i].Resource, want[i-1].Resource) {
				t.Fatalf("spans %d and %d: resource shared differently", i-1, i)
			}
		}
	})
}

func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestDecodeOTLPProtoSeeds: the seeds decode to spans (not all to errors),
// so the fuzz target's comparison is exercised.
func TestDecodeOTLPProtoSeeds(t *testing.T) {
	ok := 0
	for _, b := range wireSeeds() {
		raws, err := ingest.DecodeOTLPProto(b)
		if err == nil && len(raws) > 0 {
			ok++
		}
	}
	if ok < 3 {
		t.Fatalf("only %d seeds decode to spans", ok)
	}
	raws, err := ingest.DecodeOTLPProto(wireSeeds()[0])
	if err != nil {
		t.Fatal(err)
	}
	var _ spanmodel.Raw = raws[0]
	if raws[0].Attributes["dup"] != "two" || raws[0].Attributes["twice2"] != "first" || raws[0].Attributes["merged"] != int64(1) {
		t.Fatalf("attributes %#v", raws[0].Attributes)
	}
	if raws[0].StatusMessage != "bad" || raws[0].StatusCode != "1" || len(raws[0].Events) != 2 || len(raws[0].Links) != 2 {
		t.Fatalf("span %#v", raws[0])
	}
}
