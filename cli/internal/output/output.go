// Package output renders what a read command returns as an aligned table,
// JSON or CSV (--output), so the same command serves a person and a script.
package output

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Formats are the accepted --output values.
var Formats = []string{"table", "json", "csv"}

// Valid reports whether f is a known format.
func Valid(f string) bool {
	for _, x := range Formats {
		if f == x {
			return true
		}
	}
	return false
}

// Table is rows of cells under a header; Raw is what JSON prints (the
// server's records, not the flattened cells), or the rows as objects when
// nil.
type Table struct {
	Header []string
	Rows   [][]string
	Raw    any
	// Wide keeps long cells whole in a table (a record shown field by
	// field, where the value is the point).
	Wide bool
}

// Write renders t in format f.
func Write(w io.Writer, f string, t Table) error {
	switch f {
	case "json":
		raw := t.Raw
		if raw == nil {
			objs := make([]map[string]string, 0, len(t.Rows))
			for _, r := range t.Rows {
				o := map[string]string{}
				for i, h := range t.Header {
					if i < len(r) {
						o[h] = r[i]
					}
				}
				objs = append(objs, o)
			}
			raw = objs
		}
		return JSON(w, raw)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(t.Header); err != nil {
			return err
		}
		if err := cw.WriteAll(t.Rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	default:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.Header, "\t")))
		for _, r := range t.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = c
				if !t.Wide {
					cells[i] = oneLine(c, 60)
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	}
}

// JSON writes v indented.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine keeps a table cell on one line and at most n runes.
func oneLine(s string, n int) string {
	s = strings.NewReplacer("\n", "⏎", "\t", " ").Replace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Cell formats a decoded JSON value for a cell: strings as they are,
// numbers without exponent noise, anything else as compact JSON.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return Num(x)
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Num formats a number compactly (integers without decimals, others to
// four significant decimals).
func Num(x float64) string {
	if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
		return fmt.Sprintf("%d", int64(x))
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", x), "0"), ".")
}
