package spanstream

import (
	"bytes"

	"github.com/klauspost/compress/zstd"
)

// BatchSize is the size a message of EncodeBatch takes decoded (its
// protobuf, uncompressed), read from the zstd frame header without
// decompressing: the writer counts the bytes it will hold before it decodes
// anything. A frame without its content size (EncodeAll always writes it)
// counts as MaxBatchBytes, the most DecodeBatch would allocate for it; a
// message that is not zstd is its own size.
func BatchSize(data []byte) int {
	if !bytes.HasPrefix(data, zstdMagic) {
		return len(data)
	}
	var h zstd.Header
	if err := h.Decode(data); err != nil || !h.HasFCS || h.FrameContentSize > MaxBatchBytes {
		return MaxBatchBytes
	}
	return int(h.FrameContentSize)
}
