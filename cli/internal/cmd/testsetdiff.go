package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/assayhq/assay/cli/internal/api"
)

// A testset diff matches rows by identity, not by content: the dedup id
// every upload and simple edit gives a row (kept in its data by the
// console's delta commits), else its content id. So an edited row is one
// change naming its columns, and an added column is reported once instead
// of as a change of every row.

// tsRow is one downloaded row with its keys in the file's order.
type tsRow struct {
	keys []string
	vals map[string]json.RawMessage
}

// idColumns are the server's columns of a download with include_ids.
var idColumns = map[string]bool{"__id__": true, "__dedup_id__": true}

// identity is the key rows are matched by.
func (r tsRow) identity() string {
	for _, k := range []string{"__dedup_id__", "__id__"} {
		var s string
		if json.Unmarshal(r.vals[k], &s) == nil && s != "" {
			return k + ":" + s
		}
	}
	return "content:" + string(r.data())
}

// data is the row as JSON without the id columns, in its key order.
func (r tsRow) data() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, k := range r.keys {
		if idColumns[k] {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(compact(r.vals[k]))
		n++
	}
	b.WriteByte('}')
	return b.Bytes()
}

// nameIn is the row's value in column col (the revision's first column),
// which names a row for a person far better than an id (a question, a
// country); "" if it has none.
func (r tsRow) nameIn(col string) string {
	v, ok := r.vals[col]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(compact(v))
	}
	if s == "null" {
		s = ""
	}
	if len([]rune(s)) > 40 {
		s = string([]rune(s)[:39]) + "…"
	}
	return s
}

func compact(v json.RawMessage) []byte {
	if len(v) == 0 {
		return []byte("null")
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// empty is a cell a person would call empty: missing, null or "".
func empty(v json.RawMessage) bool {
	s := string(compact(v))
	return s == "null" || s == `""`
}

// readRows decodes a JSON array of objects keeping each object's key order.
func readRows(r io.Reader) ([]tsRow, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var rows []tsRow
	for dec.More() {
		if err := expectDelim(dec, '{'); err != nil {
			return nil, err
		}
		row := tsRow{vals: map[string]json.RawMessage{}}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := t.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, err
			}
			if _, dup := row.vals[k]; !dup {
				row.keys = append(row.keys, k)
			}
			row.vals[k] = v
		}
		if err := expectDelim(dec, '}'); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("the download is not a JSON array of objects (got %v, want %v)", t, d)
	}
	return nil
}

// revisionRows downloads a revision's rows with their ids.
func revisionRows(ctx context.Context, cl *api.Client, revID string) ([]tsRow, error) {
	res, err := cl.Send(ctx, "POST", "/api/testsets/revisions/"+pathEscape(revID)+"/download?file_type=json&include_ids=true", nil, "")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return readRows(res.Body)
}

// columnsOf is the union of the rows' columns in the order first met.
func columnsOf(rows []tsRow) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		for _, k := range r.keys {
			if !idColumns[k] && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// cellChange is one changed cell.
type cellChange struct {
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// changedRow is a row in both revisions whose cells differ. Row is its
// 1-based position in the newer revision, Name its first column value.
type changedRow struct {
	Row     int                   `json:"row"`
	Name    string                `json:"name"`
	Changes map[string]cellChange `json:"changes"`
	columns []string              // the keys of Changes, in column order
}

// placedRow is an added (position in the newer revision) or removed
// (position in the older) row.
type placedRow struct {
	Row  int
	Name string
	Data json.RawMessage
}

type testsetDiff struct {
	ColumnsAdded, ColumnsRemoved []string
	Added, Removed               []placedRow
	Changed                      []changedRow
	Unchanged                    int
}

func (d *testsetDiff) empty() bool {
	return len(d.ColumnsAdded)+len(d.ColumnsRemoved)+len(d.Added)+len(d.Removed)+len(d.Changed) == 0
}

// diffTestsetRows compares two revisions' rows by identity. A cell of an
// added column that is empty in a kept row (or of a removed column that
// was empty) is the column change, said once, not a change of that row.
func diffTestsetRows(a, b []tsRow) *testsetDiff {
	d := &testsetDiff{ColumnsAdded: []string{}, ColumnsRemoved: []string{}}
	ca, cb := columnsOf(a), columnsOf(b)
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, c := range ca {
		inA[c] = true
	}
	for _, c := range cb {
		inB[c] = true
		if !inA[c] {
			d.ColumnsAdded = append(d.ColumnsAdded, c)
		}
	}
	for _, c := range ca {
		if !inB[c] {
			d.ColumnsRemoved = append(d.ColumnsRemoved, c)
		}
	}
	all := append(append([]string{}, cb...), d.ColumnsRemoved...)
	first := func(cols []string) string {
		if len(cols) == 0 {
			return ""
		}
		return cols[0]
	}
	nameA, nameB := first(ca), first(cb)

	old := map[string][]int{}
	for i, r := range a {
		old[r.identity()] = append(old[r.identity()], i)
	}
	used := make([]bool, len(a))
	for j, r := range b {
		k := r.identity()
		l := old[k]
		if len(l) == 0 {
			d.Added = append(d.Added, placedRow{Row: j + 1, Name: r.nameIn(nameB), Data: r.data()})
			continue
		}
		i := l[0]
		old[k] = l[1:]
		used[i] = true
		ch := changedRow{Row: j + 1, Name: r.nameIn(nameB), Changes: map[string]cellChange{}}
		for _, c := range all {
			before, after := a[i].vals[c], r.vals[c]
			if bytes.Equal(compact(before), compact(after)) {
				continue
			}
			if (!inA[c] || !inB[c]) && empty(before) && empty(after) {
				continue
			}
			ch.Changes[c] = cellChange{Before: compact(before), After: compact(after)}
			ch.columns = append(ch.columns, c)
		}
		if len(ch.columns) == 0 {
			d.Unchanged++
		} else {
			d.Changed = append(d.Changed, ch)
		}
	}
	for i, r := range a {
		if !used[i] {
			d.Removed = append(d.Removed, placedRow{Row: i + 1, Name: r.nameIn(nameA), Data: r.data()})
		}
	}
	return d
}

// rowLabel is "row 4 (France)", or "row 4" for a row without a name.
func rowLabel(n int, name string) string {
	if name == "" {
		return fmt.Sprintf("row %d", n)
	}
	return fmt.Sprintf("row %d (%s)", n, name)
}

// writeText prints the diff for a person: one line per column change,
// per added or removed row and per changed row, then the counts.
func (d *testsetDiff) writeText(w io.Writer, from, to string) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, to)
	for _, c := range d.ColumnsAdded {
		fmt.Fprintf(w, "column added: %s\n", c)
	}
	for _, c := range d.ColumnsRemoved {
		fmt.Fprintf(w, "column removed: %s\n", c)
	}
	for _, r := range d.Removed {
		fmt.Fprintf(w, "- %s: %s\n", rowLabel(r.Row, r.Name), r.Data)
	}
	for _, r := range d.Added {
		fmt.Fprintf(w, "+ %s: %s\n", rowLabel(r.Row, r.Name), r.Data)
	}
	for _, r := range d.Changed {
		parts := make([]string, len(r.columns))
		for i, c := range r.columns {
			parts[i] = fmt.Sprintf("%s %s → %s", c, r.Changes[c].Before, r.Changes[c].After)
		}
		fmt.Fprintf(w, "%s: %s\n", rowLabel(r.Row, r.Name), strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "%d added, %d removed, %d changed, %d unchanged\n", len(d.Added), len(d.Removed), len(d.Changed), d.Unchanged)
}

// raw is the diff for --output json.
func (d *testsetDiff) raw() obj {
	rows := func(rs []placedRow) []json.RawMessage {
		out := make([]json.RawMessage, len(rs))
		for i, r := range rs {
			out[i] = r.Data
		}
		return out
	}
	return obj{"columns_added": d.ColumnsAdded, "columns_removed": d.ColumnsRemoved,
		"added": rows(d.Added), "removed": rows(d.Removed), "changed": append([]changedRow{}, d.Changed...), "unchanged": d.Unchanged}
}
