package tcfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

const bom = "\xef\xbb\xbf"

// slabSize is how many rows share one allocation of objects and members:
// fewer, larger allocations make importing a big file markedly cheaper.
// slabMembers caps the members of one slab, so a file with a very wide
// header and few rows costs its rows, not 256 rows of its width.
const (
	slabSize    = 256
	slabMembers = 8192
)

// openStream wraps r with the byte limit and skips a UTF-8 byte order mark.
// It returns the number of BOM bytes skipped, for error offsets.
func openStream(r io.Reader, lim Limits) (*bufio.Reader, *limitReader, int64) {
	lr := &limitReader{r: r, max: lim.MaxBytes}
	br := bufio.NewReaderSize(lr, 64<<10)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		_, _ = br.Discard(len(bom))
		return br, lr, int64(len(bom))
	}
	return br, lr, 0
}

// readError maps an error met while reading: the sticky 413 wins over
// whatever the parser made of the truncated stream, and I/O failures of the
// upload itself (a dropped connection, a broken multipart body) are 400s.
func readError(lr *limitReader, err error) error {
	if lr.err != nil {
		return lr.err
	}
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	return errs.Wrap(errs.Invalid, "testsets.bad_file", fmt.Errorf("could not read the file: %w", err))
}

// ReadCSV imports a CSV file: UTF-8 with an optional BOM, the first line is
// the header and every cell is a string (no type inference). A row shorter
// than the header gives null for the missing cells; a longer one, invalid
// UTF-8, a missing header, a repeated column name or a quoted cell that is
// never closed is a 400 naming the line. Quotes otherwise follow Python's
// lenient csv module (see csvReader): a stray quote inside an unquoted cell
// is kept literally (`5" screen`).
//
// Reserved columns are taken out of data: __id__ becomes Row.SourceID,
// __dedup_id__ becomes data.testcase_dedup_id unless that is already set,
// and __flags__, __tags__, __meta__ cells must hold a JSON object (or be
// empty, meaning absent) and become the row's Flags, Tags and Meta.
func ReadCSV(r io.Reader, lim Limits) ([]testcases.Row, error) {
	br, lr, _ := openStream(r, lim)
	cr := &csvReader{br: br}

	rec, headerLine, err := cr.Read()
	if err == io.EOF {
		if lr.err != nil {
			return nil, lr.err
		}
		return nil, badFile("the file is empty: a header line is required")
	}
	if err != nil {
		return nil, readError(lr, err)
	}
	header := slices.Clone(rec) // rec is reused by the next Read
	type special struct{ id, dedup, flags, tags, meta int }
	sp := special{-1, -1, -1, -1, -1}
	dataCols := 0
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if !utf8.ValidString(h) {
			return nil, badFile("line %d: column %d of the header is not valid UTF-8", headerLine, i+1)
		}
		if seen[h] {
			return nil, badFile("line %d: duplicate column %q in the header", headerLine, h)
		}
		seen[h] = true
		switch h {
		case colID:
			sp.id = i
		case colDedupID:
			sp.dedup = i
		case colFlags:
			sp.flags = i
		case colTags:
			sp.tags = i
		case colMeta:
			sp.meta = i
		default:
			dataCols++
		}
	}
	dataCap := dataCols
	if sp.dedup >= 0 {
		dataCap++ // room for testcase_dedup_id
	}
	slabRows := max(1, min(slabSize, slabMembers/max(1, dataCap)))

	var (
		rows    []testcases.Row
		objs    []canon.Object
		members []canon.Member
	)
	for {
		rec, line, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readError(lr, err)
		}
		if len(rec) > len(header) {
			return nil, badFile("line %d: %d cells, but the header has %d columns", line, len(rec), len(header))
		}
		if lim.MaxRows > 0 && len(rows) >= lim.MaxRows {
			return nil, tooManyRows(lim.MaxRows)
		}
		for i, cell := range rec {
			if !utf8.ValidString(cell) {
				return nil, badFile("line %d, column %q: invalid UTF-8", line, header[i])
			}
		}
		if len(objs) == 0 {
			objs = make([]canon.Object, slabRows)
			members = make([]canon.Member, slabRows*dataCap)
		}
		o := &objs[0]
		objs = objs[1:]
		o.Members = members[:0:dataCap]
		members = members[dataCap:]

		for i, h := range header {
			switch i {
			case sp.id, sp.dedup, sp.flags, sp.tags, sp.meta:
				continue
			}
			o.Members = append(o.Members, canon.Member{Key: h, Value: cellAt(rec, i)})
		}
		row := testcases.Row{Data: o}
		if sp.id >= 0 && sp.id < len(rec) {
			row.SourceID = rec[sp.id]
		}
		if sp.dedup >= 0 {
			if cur, _ := o.Get(testcases.KeyDedupID); !testcases.Truthy(cur) {
				o.Set(testcases.KeyDedupID, cellAt(rec, sp.dedup))
			}
		}
		if row.Flags, err = objectCell(rec, header, sp.flags, line); err != nil {
			return nil, err
		}
		if row.Tags, err = objectCell(rec, header, sp.tags, line); err != nil {
			return nil, err
		}
		if row.Meta, err = objectCell(rec, header, sp.meta, line); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if lr.err != nil {
		return nil, lr.err
	}
	if rows == nil {
		rows = []testcases.Row{}
	}
	return rows, nil
}

// cellAt returns cell i of a record, or nil past its end: a short row gets
// None from Python's csv.DictReader, and the compatible platform stores that as null.
func cellAt(rec []string, i int) any {
	if i < len(rec) {
		return rec[i]
	}
	return nil
}

// objectCell parses the reserved column at index i (-1: no such column).
// An empty or missing cell is absent; anything else must be a JSON object.
// The compatible platform cannot read these from CSV at all; we can.
func objectCell(rec, header []string, i, line int) (*canon.Object, error) {
	if i < 0 || i >= len(rec) || rec[i] == "" {
		return nil, nil
	}
	o, err := canon.ParseObject([]byte(rec[i]))
	if err != nil {
		return nil, badFile("line %d, column %q: the cell must be empty or a JSON object", line, header[i])
	}
	return o, nil
}

// ReadJSON imports a JSON file: a top-level array of objects, optionally
// preceded by a UTF-8 BOM. The array is walked item by item with a
// json.Decoder, so only one item is in memory as raw bytes at a time.
//
// Stricter than the compatible platform, which skips non-object entries: an item
// that is not an object is a 400 naming its 0-based index, as are malformed
// JSON (with the byte offset), invalid UTF-8 and data after the array.
// Reserved keys are handled as in ReadCSV; __flags__, __tags__ and __meta__
// must be objects or null.
func ReadJSON(r io.Reader, lim Limits) ([]testcases.Row, error) {
	br, lr, skipped := openStream(r, lim)
	dec := json.NewDecoder(br)
	// Token would convert a stray number to float64 and fail on 1e7000
	// with no position; as json.Number it is just the wrong token.
	dec.UseNumber()

	jsonError := func(err error, where string) error {
		if lr.err != nil {
			return lr.err
		}
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// encoding/json offsets are approximate (they count scanned bytes).
			return badFile("%sinvalid JSON near byte offset %d: %v", where, se.Offset+skipped, err)
		case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
			return badFile("%sunexpected end of file", where)
		}
		return readError(lr, err)
	}

	tok, err := dec.Token()
	if err == io.EOF && lr.err == nil {
		return nil, badFile("the file is empty: a JSON array of objects is required")
	}
	if err != nil {
		return nil, jsonError(err, "")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, badFile("the top-level value must be an array of objects")
	}
	rows := []testcases.Row{}
	for i := 0; dec.More(); i++ {
		where := fmt.Sprintf("item %d: ", i)
		if lim.MaxRows > 0 && len(rows) >= lim.MaxRows {
			return nil, tooManyRows(lim.MaxRows)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(err, where)
		}
		if raw[0] != '{' { // Decode trims leading space
			return nil, badFile("item %d is not an object", i)
		}
		if !utf8.Valid(raw) {
			return nil, badFile("item %d: invalid UTF-8", i)
		}
		// The shape limits of JSON bodies apply to the rows a file brings.
		if err := inputlimits.CheckJSONLimits(raw, "body", "file", i); err != nil {
			return nil, err
		}
		o, err := canon.ParseObject(raw)
		if err != nil {
			return nil, badFile("item %d: %v", i, err)
		}
		row := testcases.Row{Data: o}
		err = popReserved(&row, func(col string, v any) (*canon.Object, error) {
			if v == nil {
				return nil, nil
			}
			if obj, ok := v.(*canon.Object); ok {
				return obj, nil
			}
			return nil, badFile("item %d: %s must be a JSON object or null", i, col)
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, jsonError(err, "at the end of the array: ")
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, jsonError(err, "after the array: ")
		}
		return nil, badFile("unexpected data after the array at byte offset %d", dec.InputOffset()+skipped)
	}
	if lr.err != nil {
		return nil, lr.err
	}
	return rows, nil
}
