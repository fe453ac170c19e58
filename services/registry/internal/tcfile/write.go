package tcfile

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"

	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

// exportRow appends the exported form of a row to dst, doing what the
// compatible platform does to a copy of data, in the same order:
//
//	if "testcase_dedup_id" in data: v = pop it; if "__dedup_id__" not in data: data["__dedup_id__"] = v
//	data["__id__"] = str(id)
//	data["__flags__"] = flags  (and tags, meta) when not None
//
// Assignments to keys already present keep their position, as in a dict.
// id is the value stored under __id__: the id's string, or nil for callers
// that fill it in themselves (saving an allocation per row). Without ids
// it leaves out the dedup id (under either name) and __id__: columns the
// server derives, which a person reading the file does not need (a
// re-upload derives the same ones for rows unchanged in place).
func exportRow(dst []canon.Member, r *testcases.Row, id any, ids bool) []canon.Member {
	start := len(dst)
	var dedup any
	hasDedup, hasLegacy := false, false
	if r.Data != nil {
		for _, m := range r.Data.Members {
			switch m.Key {
			case testcases.KeyDedupID, colDedupID:
				if !ids {
					continue
				}
			}
			switch m.Key {
			case testcases.KeyDedupID:
				dedup, hasDedup = m.Value, true
				continue
			case colDedupID:
				hasLegacy = true
			}
			dst = append(dst, m)
		}
	}
	if hasDedup && !hasLegacy {
		dst = append(dst, canon.Member{Key: colDedupID, Value: dedup})
	}
	if ids {
		dst = setMember(dst, start, colID, id)
	}
	if r.Flags != nil {
		dst = setMember(dst, start, colFlags, r.Flags)
	}
	if r.Tags != nil {
		dst = setMember(dst, start, colTags, r.Tags)
	}
	if r.Meta != nil {
		dst = setMember(dst, start, colMeta, r.Meta)
	}
	return dst
}

// setMember is a dict assignment on dst[start:]: in place if key is there,
// appended otherwise.
func setMember(dst []canon.Member, start int, key string, v any) []canon.Member {
	for i := start; i < len(dst); i++ {
		if dst[i].Key == key {
			dst[i].Value = v
			return dst
		}
	}
	return append(dst, canon.Member{Key: key, Value: v})
}

// WriteJSON writes rows as one compact JSON array of exported rows, keeping
// each row's key order; no rows give "[]". Output is buffered and streamed
// row by row.
func WriteJSON(w io.Writer, rows []testcases.Row) error { return writeJSON(w, rows, true) }

// WriteJSONData is WriteJSON without the __dedup_id__ and __id__ keys.
func WriteJSONData(w io.Writer, rows []testcases.Row) error { return writeJSON(w, rows, false) }

func writeJSON(w io.Writer, rows []testcases.Row, ids bool) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	buf := make([]byte, 0, 4<<10)
	var ms []canon.Member
	buf = append(buf, '[')
	for i := range rows {
		if i > 0 {
			buf = append(buf, ',')
		}
		ms = exportRow(ms[:0], &rows[i], rows[i].ID.String(), ids)
		buf = canon.AppendCompact(buf, &canon.Object{Members: ms})
		if len(buf) >= 16<<10 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, ']')
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteCSV writes rows as CSV. The header is the union of the exported
// keys in the order they are first met, row by row, so a file's columns
// come back in the order of its upload (data columns, then __dedup_id__ and
// __id__), as in WriteJSON; __flags__, __tags__ and __meta__ only appear
// when some row has them. The compatible platform sorts the header; we keep the
// user's order, as pandas and a dict union would. Cells: null and missing
// keys are empty, strings as is, numbers as their literal, booleans as
// Python prints them (True/False), objects and arrays as compact JSON. No
// rows give an empty body.
func WriteCSV(w io.Writer, rows []testcases.Row) error { return writeCSV(w, rows, true) }

// WriteCSVData is WriteCSV without the __dedup_id__ and __id__ columns.
func WriteCSVData(w io.Writer, rows []testcases.Row) error { return writeCSV(w, rows, false) }

func writeCSV(w io.Writer, rows []testcases.Row, ids bool) error {
	if len(rows) == 0 {
		return nil
	}
	// Pass 1: the columns. Export members are recomputed in pass 2 rather
	// than kept, so memory stays at one row's worth.
	var ms []canon.Member
	cols := make(map[string]int)
	var header []string
	for i := range rows {
		ms = exportRow(ms[:0], &rows[i], nil, ids)
		for _, m := range ms {
			if _, ok := cols[m.Key]; !ok {
				cols[m.Key] = len(header)
				header = append(header, m.Key)
			}
		}
	}

	cw := csv.NewWriter(w)
	if strings.HasPrefix(header[0], bom) {
		// A file starting with U+FEFF reads back with it stripped as a
		// byte-order mark, renaming the first column; quoted, it stays.
		if _, err := io.WriteString(w, `"`+strings.ReplaceAll(header[0], `"`, `""`)+`"`); err != nil {
			return err
		}
		header[0] = ""
		if len(header) == 1 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		} else if err := cw.Write(header); err != nil {
			return err
		}
	} else if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	idCol, hasID := cols[colID]
	var scratch []byte
	for i := range rows {
		clear(rec)
		ms = exportRow(ms[:0], &rows[i], nil, ids)
		for _, m := range ms {
			rec[cols[m.Key]], scratch = cellText(m.Value, scratch)
		}
		if hasID {
			rec[idCol] = rows[i].ID.String()
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cellText renders one CSV cell the way the compatible platform's export does.
func cellText(v any, scratch []byte) (string, []byte) {
	switch t := v.(type) {
	case nil:
		return "", scratch
	case string:
		return t, scratch
	case json.Number:
		return string(t), scratch
	case bool:
		if t {
			return "True", scratch
		}
		return "False", scratch
	default:
		scratch = canon.AppendCompact(scratch[:0], v)
		return string(scratch), scratch
	}
}
