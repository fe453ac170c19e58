package spanstream

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// Limits of one span-batch message. Tracing refuses a request whose batch
// would exceed them (413) and the writer decodes up to exactly them, so a
// batch that was published is always decodable: nothing accepted is
// dead-lettered for its size.
const (
	// MaxBatchBytes bounds a batch's protobuf, uncompressed: the writer's
	// decoder allocates no more for one message.
	MaxBatchBytes = 256 << 20
	// MaxMessageBytes bounds a message as published (compressed): the
	// stream's MaxMsgSize. NATS' max_payload may be lower (16 MiB in our
	// deployments); a publish over it is refused before the answer too.
	MaxMessageBytes = 64 << 20
)

// ErrBatchTooLarge is a batch over MaxBatchBytes or MaxMessageBytes.
var ErrBatchTooLarge = errors.New("span batch exceeds the message limits")

// A SpanBatch message is the protobuf, zstd-compressed: span attributes are
// repetitive JSON, and NATS refuses messages over its max_payload (1 MiB by
// default) while an OTLP request may be 10 MiB. The zstd frame magic tells
// the writer which form it got, so uncompressed batches still decode.
var (
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	encOnce   sync.Once
	enc       *zstd.Encoder
	dec       *zstd.Decoder
)

func codecs() {
	encOnce.Do(func() {
		// One encoder state per core: with one, concurrent requests
		// waited for each other's compression.
		enc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxBatchBytes))
	})
}

// compressFrom is the smallest batch worth compressing: a zstd frame costs
// a few hundred microseconds of encoder set-up whatever its size, more than
// the runtime's whole two-span invocation batch takes to build, and saves
// only a few kilobytes on the wire there. DecodeBatch reads both forms.
const compressFrom = 16 << 10

// EncodeBatch marshals and compresses a batch (from compressFrom bytes;
// over 2×minPartSpans spans, in parts side by side); a batch over the message
// limits is ErrBatchTooLarge. (Checked on the marshalled bytes: a
// proto.Size walk first would cost every batch a few percent, and ingest
// bounds its batches before they get here.) The protobuf is marshalled
// (appendBatch) into a pooled buffer, which only the compressor reads: a
// 500-span request's ~1 MB is then neither allocated nor zeroed for each
// request.
func EncodeBatch(b *spanspb.SpanBatch) ([]byte, error) {
	parts := min(runtime.GOMAXPROCS(0), len(b.GetSpans())/minPartSpans)
	if parts < 2 || len(b.ProtoReflect().GetUnknown()) > 0 {
		out, _, err := encodeFrame(b)
		if err != nil {
			return nil, err
		}
		return out, checkMessage(len(out))
	}
	// A large batch is marshalled and compressed in parts side by side, one
	// zstd frame each, one after another: concatenated protobuf messages
	// read as one whose repeated spans are appended (the other fields
	// repeat, with the same values), and a zstd decoder reads concatenated
	// frames as one stream, so DecodeBatch reads the batch as it was. (One
	// frame kept a 512-span request's latency on one core for 3 ms.)
	type frame struct {
		out []byte
		raw int
		err error
	}
	frames := make([]frame, parts)
	var wg sync.WaitGroup
	n := len(b.Spans)
	for p := range parts {
		part := &spanspb.SpanBatch{ProjectId: b.ProjectId, UserId: b.UserId, ReceivedUnixNano: b.ReceivedUnixNano,
			Spans: b.Spans[p*n/parts : (p+1)*n/parts]}
		wg.Go(func() { frames[p].out, frames[p].raw, frames[p].err = encodeFrame(part) })
	}
	wg.Wait()
	raw, size := 0, 0
	for _, f := range frames {
		if f.err != nil {
			return nil, f.err
		}
		raw, size = raw+f.raw, size+len(f.out)
	}
	if raw > MaxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes of protobuf, the most is %d", ErrBatchTooLarge, raw, MaxBatchBytes)
	}
	if err := checkMessage(size); err != nil {
		return nil, err
	}
	out := make([]byte, 0, size)
	for _, f := range frames {
		out = append(out, f.out...)
	}
	return out, nil
}

// minPartSpans is the fewest spans EncodeBatch gives a part of its own.
const minPartSpans = 64

// encodeFrame is b marshalled, compressed from compressFrom bytes, and the
// size of its protobuf.
func encodeFrame(b *spanspb.SpanBatch) ([]byte, int, error) {
	bp := rawPool.Get().(*[]byte)
	defer putRaw(bp)
	raw, err := appendBatch((*bp)[:0], b)
	if err != nil {
		return nil, 0, fmt.Errorf("marshal span batch: %w", err)
	}
	*bp = raw
	if len(raw) > MaxBatchBytes {
		return nil, 0, fmt.Errorf("%w: %d bytes of protobuf, the most is %d", ErrBatchTooLarge, len(raw), MaxBatchBytes)
	}
	if len(raw) < compressFrom {
		return bytes.Clone(raw), len(raw), nil
	}
	codecs()
	return enc.EncodeAll(raw, make([]byte, 0, len(raw)/4)), len(raw), nil
}

func checkMessage(size int) error {
	if size > MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes compressed, the most is %d", ErrBatchTooLarge, size, MaxMessageBytes)
	}
	return nil
}

// rawPool holds marshal buffers; one over maxPooled is let go, so that a
// rare huge batch does not stay in memory.
var rawPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 16 << 20

func putRaw(bp *[]byte) {
	if cap(*bp) > maxPooled {
		return
	}
	rawPool.Put(bp)
}

// DecodeBatch reads a batch written by EncodeBatch (or plain protobuf).
func DecodeBatch(data []byte) (*spanspb.SpanBatch, error) {
	b, _, err := DecodeBatchSize(data)
	return b, err
}

// DecodeBatchSize is DecodeBatch that also answers the batch's size as
// protobuf, uncompressed: what the batch holds in memory, without a
// proto.Size walk. The batch's strings are views of one buffer of its own
// (the decompressed message, or a copy of data), not of data.
func DecodeBatchSize(data []byte) (*spanspb.SpanBatch, int, error) {
	if bytes.HasPrefix(data, zstdMagic) {
		codecs()
		raw, err := dec.DecodeAll(data, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("decompress span batch: %w", err)
		}
		data = raw
	} else {
		data = bytes.Clone(data) // small (below compressFrom): the copy is cheap
	}
	var b spanspb.SpanBatch
	if err := unmarshalBatch(data, &b); err != nil {
		return nil, 0, fmt.Errorf("decode span batch: %w", err)
	}
	return &b, len(data), nil
}
