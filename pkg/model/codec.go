package model

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

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
		enc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
	})
}

// EncodeBatch marshals and compresses a batch.
func EncodeBatch(b *spanspb.SpanBatch) ([]byte, error) {
	raw, err := proto.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("marshal span batch: %w", err)
	}
	codecs()
	return enc.EncodeAll(raw, make([]byte, 0, len(raw)/4)), nil
}

// DecodeBatch reads a batch written by EncodeBatch (or plain protobuf).
func DecodeBatch(data []byte) (*spanspb.SpanBatch, error) {
	if bytes.HasPrefix(data, zstdMagic) {
		codecs()
		raw, err := dec.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("decompress span batch: %w", err)
		}
		data = raw
	}
	var b spanspb.SpanBatch
	if err := proto.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decode span batch: %w", err)
	}
	return &b, nil
}
