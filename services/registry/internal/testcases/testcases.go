// Package testcases computes testcase content ids and dedup ids, and applies
// commit deltas, exactly as the compatible platform does. It is pure: no storage, no HTTP.
//
// A testcase id is a hash of the testset id and the canonical JSON of the
// row's data, so the same row committed twice to a testset is one blob.
// Simple and upload paths first give every row a testcase_dedup_id derived
// from its position, which keeps identical rows distinct.
package testcases

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/crypto/blake2b"

	"github.com/assayhq/assay/services/registry/internal/canon"
)

// Data keys with a meaning for dedup (AssignDedup).
const (
	KeyDedupID       = "testcase_dedup_id"
	KeyLegacyDedupID = "__dedup_id__"
	KeyTestcaseID    = "testcase_id"
)

// Row is one testcase being imported, committed or exported.
type Row struct {
	// ID is the content id; set by AssignIDs. On the wire it is the row's
	// "id", which only delta replace uses (to name the base row).
	ID uuid.UUID
	// Data is the row's columns. Never nil once imported.
	Data *canon.Object
	// Flags, Tags and Meta are nil when absent.
	Flags, Tags, Meta *canon.Object
	// SourceID is the __id__ a file gave the row ("" if none). It never
	// becomes the id; it only feeds dedup ids and collapsing (AssignDedup).
	SourceID string
}

// hasher bundles a reusable 16-byte BLAKE2b state with a scratch buffer so
// hashing thousands of rows does not allocate per row.
type hasher struct {
	h   hash.Hash
	buf []byte
	sum [16]byte
}

var hasherPool = sync.Pool{New: func() any {
	h, err := blake2b.New(16, nil)
	if err != nil {
		panic(err) // only for an invalid size or key, which are constants
	}
	return &hasher{h: h, buf: make([]byte, 0, 512)}
}}

// BlobID returns the content id of a testcase, the compatible platform's:
//
//	h = blake2b(str(set_id or None) + canonical_json(data) or "", digest_size=16)
//
// with the version nibble forced to 5 and the RFC 4122 variant bits set.
// Empty or nil data hashes as "" (Python: json.dumps(data) if data else "").
func BlobID(setID *uuid.UUID, data *canon.Object) uuid.UUID {
	hs := hasherPool.Get().(*hasher)
	b := hs.buf[:0]
	if setID == nil {
		b = append(b, "None"...)
	} else {
		var s [36]byte
		hex.Encode(s[:8], setID[:4])
		s[8] = '-'
		hex.Encode(s[9:13], setID[4:6])
		s[13] = '-'
		hex.Encode(s[14:18], setID[6:8])
		s[18] = '-'
		hex.Encode(s[19:23], setID[8:10])
		s[23] = '-'
		hex.Encode(s[24:], setID[10:])
		b = append(b, s[:]...)
	}
	if data.Len() > 0 {
		b = canon.AppendCanonical(b, data)
	}
	hs.h.Reset()
	hs.h.Write(b)
	hs.h.Sum(hs.sum[:0])
	var id uuid.UUID
	copy(id[:], hs.sum[:])
	id[6] = (id[6] & 0x0F) | 0x50
	id[8] = (id[8] & 0x3F) | 0x80
	if cap(b) <= 64<<10 { // do not pin huge buffers in the pool
		hs.buf = b[:0]
	}
	hasherPool.Put(hs)
	return id
}

// DedupID returns blake2b(f"{tid}:{index}", digest_size=6).hexdigest(): the
// generated testcase_dedup_id of the row at index whose testcase id (given
// or computed) is tid.
func DedupID(tid uuid.UUID, index int) string {
	h, _ := blake2b.New(6, nil)
	var b [64]byte
	s := append(b[:0], tid.String()...)
	s = append(s, ':')
	s = strconv.AppendInt(s, int64(index), 10)
	h.Write(s)
	var sum [6]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// AssignIDs sets each row's ID to its content id in the testset setID. A nil
// Data is replaced by an empty object first, so the rows are ready to store.
func AssignIDs(setID uuid.UUID, rows []Row) {
	for i := range rows {
		if rows[i].Data == nil {
			rows[i].Data = canon.NewObject(0)
		}
		rows[i].ID = BlobID(&setID, rows[i].Data)
	}
}

// AssignDedup gives every row a data.testcase_dedup_id, and
// returns the rows. It edits the rows' Data in place. For the row at index i:
//
//  1. only when jsonBody: a truthy data.__dedup_id__ moves to
//     data.testcase_dedup_id unless that is already truthy; __dedup_id__ is
//     always removed. (File rows had this done by the file reader.)
//  2. d = pop(data.testcase_dedup_id), t = pop(data.testcase_id); when t is
//     not truthy, the row's SourceID (a file's __id__) is used instead.
//  3. tid = t if t is a string Python's uuid.UUID() accepts, else the content
//     id of the remaining data with no set id.
//  4. if d is not truthy, d = DedupID(tid, i).
//  5. data.testcase_dedup_id = d (appended as the last key, like Python).
//
// "Truthy" is Python's: null, "", 0, false, {} and [] are empty; other
// values (even non-strings) are kept as they are.
//
// In upload mode (jsonBody false) rows whose t is a UUID collapse to one:
// the row stays at the position of the first occurrence and carries the
// data, flags, tags and meta of the last, each computed at its own original
// index i. The result is then a new, shorter slice. In JSON-body mode
// nothing collapses (the compatible platform misaligns rows there instead; we keep
// every row).
func AssignDedup(rows []Row, jsonBody bool) []Row {
	var firstAt map[uuid.UUID]int // explicit id → index in out, upload mode only
	out := rows
	collapsed := false
	for i := range rows {
		r := &rows[i]
		if r.Data == nil {
			r.Data = canon.NewObject(1)
		}
		data := r.Data
		if jsonBody {
			if legacy, ok := data.Delete(KeyLegacyDedupID); ok && Truthy(legacy) {
				if cur, _ := data.Get(KeyDedupID); !Truthy(cur) {
					data.Set(KeyDedupID, legacy)
				}
			}
		}
		d, _ := data.Delete(KeyDedupID)
		t, _ := data.Delete(KeyTestcaseID)
		if !Truthy(t) && r.SourceID != "" {
			t = r.SourceID
		}
		tid, explicit := uuid.UUID{}, false
		if s, ok := t.(string); ok {
			tid, explicit = ParsePythonUUID(s)
		}
		if !explicit {
			tid = BlobID(nil, data)
		}
		if !Truthy(d) {
			d = DedupID(tid, i)
		}
		data.Set(KeyDedupID, d)

		if jsonBody || !explicit {
			if collapsed {
				out = append(out, *r)
			}
			continue
		}
		if firstAt == nil {
			firstAt = make(map[uuid.UUID]int)
		}
		if j, seen := firstAt[tid]; seen {
			if !collapsed {
				out = append(make([]Row, 0, len(rows)), rows[:i]...)
				collapsed = true
			}
			out[j] = *r // first position, last data
			continue
		}
		if collapsed {
			out = append(out, *r)
			firstAt[tid] = len(out) - 1
		} else {
			firstAt[tid] = i
		}
	}
	return out
}

// Truthy reports whether a JSON value is truthy in Python: null, false, "",
// numeric zero, {} and [] are not.
func Truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case *canon.Object:
		return t.Len() > 0
	case []any:
		return len(t) > 0
	case json.Number:
		return !isZeroLiteral(string(t))
	default:
		return true
	}
}

// isZeroLiteral reports whether a JSON number literal is zero in Python:
// an int whose digits are all 0, or a float that parses to ±0.0 (which
// includes underflows such as 1e-400).
func isZeroLiteral(s string) bool {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		return f == 0 && (err == nil || !errors.Is(err, strconv.ErrSyntax))
	}
	return strings.Trim(s, "-0") == ""
}
