package testcases

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/canon"
)

// Delta is a commit's "delta":
//
//	{"rows":    {"add": [Testcase], "remove": [uuid], "replace": [Testcase with id]},
//	 "columns": {"add": ["col"], "remove": ["col"], "replace": [["old","new"], ...]}}
//
// Every part is optional. It decodes with json.Unmarshal; malformed parts
// (a column pair that is not two strings, a remove entry that is not a
// UUID, a replace row without an id) give a 422 *errs.Error naming the
// offending location.
type Delta struct {
	Rows struct {
		Add     []Row       `json:"add,omitempty"`
		Remove  []uuid.UUID `json:"remove,omitempty"`
		Replace []Row       `json:"replace,omitempty"`
	} `json:"rows"`
	Columns struct {
		Add     []string    `json:"add,omitempty"`
		Remove  []string    `json:"remove,omitempty"`
		Replace [][2]string `json:"replace,omitempty"`
	} `json:"columns"`
}

// UnmarshalJSON decodes the wire form, validating it strictly.
func (d *Delta) UnmarshalJSON(b []byte) error {
	var w struct {
		Rows *struct {
			Add     []Row             `json:"add"`
			Remove  []json.RawMessage `json:"remove"`
			Replace []Row             `json:"replace"`
		} `json:"rows"`
		Columns *struct {
			Add     []string            `json:"add"`
			Remove  []string            `json:"remove"`
			Replace [][]json.RawMessage `json:"replace"`
		} `json:"columns"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fieldError(err, "delta")
	}
	*d = Delta{}
	if w.Rows != nil {
		d.Rows.Add = w.Rows.Add
		d.Rows.Replace = w.Rows.Replace
		for i, r := range w.Rows.Replace {
			if r.ID == uuid.Nil {
				return errs.Field("Field required", nil, "delta", "rows", "replace", i, "id")
			}
		}
		for i, raw := range w.Rows.Remove {
			var s string
			id, err := uuid.Nil, json.Unmarshal(raw, &s)
			if err == nil {
				id, err = uuid.Parse(s)
			}
			if err != nil {
				return errs.Field("Input should be a valid UUID", string(raw), "delta", "rows", "remove", i)
			}
			d.Rows.Remove = append(d.Rows.Remove, id)
		}
	}
	if w.Columns != nil {
		d.Columns.Add = w.Columns.Add
		d.Columns.Remove = w.Columns.Remove
		for i, pair := range w.Columns.Replace {
			var p [2]string
			ok := len(pair) == 2 &&
				json.Unmarshal(pair[0], &p[0]) == nil && json.Unmarshal(pair[1], &p[1]) == nil
			if !ok {
				return errs.Field(`Input should be a pair of column names ["old", "new"]`, nil,
					"delta", "columns", "replace", i)
			}
			d.Columns.Replace = append(d.Columns.Replace, p)
		}
	}
	return nil
}

// fieldError turns a decoding error into a 422 naming its location, unless
// it already is an *errs.Error (from a nested Row).
func fieldError(err error, loc ...any) error {
	if e, ok := err.(*errs.Error); ok {
		return e
	}
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		loc = append(loc, te.Field)
		return errs.Field(fmt.Sprintf("Input should be a valid %s", jsonKind(te.Type.Kind().String())), te.Value, loc...)
	}
	return errs.Field(err.Error(), nil, loc...)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "slice", "array":
		return "list"
	case "struct", "map":
		return "object"
	default:
		return goKind
	}
}

// ApplyDelta rebuilds a revision's rows from its base rows (columns first, then
// rows, as the compatible platform applies a delta) and returns new rows; base
// is not modified.
//
// Column operations apply to base rows only, walking each row's keys in
// order: removed columns are dropped, renamed columns keep their position
// under the new name (renames are not chained: with a→b and b→c, the old a
// becomes b and the old b becomes c; if the new name is already taken, the
// first position keeps the later value, as a Python dict would), then every
// added column missing from the row is appended with "".
//
// Row operations: a base row whose id is replaced takes the replacement's
// data (not column-transformed; with several replacements for one id the
// last wins); a row whose id is removed is dropped (remove beats replace);
// added rows are appended as sent. Only data survives — ID, SourceID,
// flags, tags and meta are cleared — so AssignIDs must run next.
func ApplyDelta(base []Row, d Delta) []Row {
	removedCols := make(map[string]bool, len(d.Columns.Remove))
	for _, c := range d.Columns.Remove {
		removedCols[c] = true
	}
	renamed := make(map[string]string, len(d.Columns.Replace))
	for _, p := range d.Columns.Replace {
		renamed[p[0]] = p[1]
	}
	removedRows := make(map[uuid.UUID]bool, len(d.Rows.Remove))
	for _, id := range d.Rows.Remove {
		removedRows[id] = true
	}
	replaced := make(map[uuid.UUID]*canon.Object, len(d.Rows.Replace))
	for _, r := range d.Rows.Replace {
		replaced[r.ID] = r.Data
	}
	columnOps := len(removedCols)+len(renamed)+len(d.Columns.Add) > 0

	out := make([]Row, 0, len(base)+len(d.Rows.Add))
	for _, r := range base {
		if removedRows[r.ID] {
			continue
		}
		if data, ok := replaced[r.ID]; ok {
			out = append(out, Row{Data: cloneData(data)})
			continue
		}
		data := cloneData(r.Data)
		if columnOps {
			data = applyColumns(data, removedCols, renamed, d.Columns.Add)
		}
		out = append(out, Row{Data: data})
	}
	for _, r := range d.Rows.Add {
		out = append(out, Row{Data: cloneData(r.Data)})
	}
	return out
}

func cloneData(o *canon.Object) *canon.Object {
	if o == nil {
		return canon.NewObject(0)
	}
	return o.Clone()
}

func applyColumns(data *canon.Object, removed map[string]bool, renamed map[string]string, add []string) *canon.Object {
	out := canon.NewObject(data.Len() + len(add))
	for _, m := range data.Members {
		if removed[m.Key] {
			continue
		}
		key := m.Key
		if n, ok := renamed[key]; ok {
			key = n
		}
		out.Set(key, m.Value)
	}
	for _, c := range add {
		if !out.Has(c) {
			out.Set(c, "")
		}
	}
	return out
}
