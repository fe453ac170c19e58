package cmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustRows(t *testing.T, js string) []tsRow {
	t.Helper()
	rows, err := readRows(strings.NewReader(js))
	require.NoError(t, err)
	return rows
}

// TestDiffTestsetRows: rows matched by dedup id, else by content id; a
// removed column that held a value is a change of that row, its empty
// cells are not; identical rows stay apart; rows are named by the first
// column of their revision.
func TestDiffTestsetRows(t *testing.T) {
	a := mustRows(t, `[
		{"q":"2+2","a":"4","note":"","__dedup_id__":"d1","__id__":"i1"},
		{"q":"3*3","a":"9","note":"hard","__dedup_id__":"d2","__id__":"i2"},
		{"q":"same","a":"x","__id__":"s"},
		{"q":"same","a":"x","__id__":"s"}]`)
	b := mustRows(t, `[
		{"q":"2+2","a":"4","__dedup_id__":"d1","__id__":"i1b"},
		{"q":"3*3","a":"9","__dedup_id__":"d2","__id__":"i2b"},
		{"q":"same","a":"x","__id__":"s"}]`)
	d := diffTestsetRows(a, b)
	assert.Equal(t, []string{"note"}, d.ColumnsRemoved)
	assert.Empty(t, d.ColumnsAdded)
	require.Len(t, d.Changed, 1)
	assert.Equal(t, 2, d.Changed[0].Row)
	assert.Equal(t, "3*3", d.Changed[0].Name)
	assert.Equal(t, []string{"note"}, d.Changed[0].columns)
	assert.Equal(t, `"hard"`, string(d.Changed[0].Changes["note"].Before))
	assert.Equal(t, "null", string(d.Changed[0].Changes["note"].After))
	require.Len(t, d.Removed, 1, "one of the two identical rows")
	assert.Equal(t, 4, d.Removed[0].Row)
	assert.Equal(t, `{"q":"same","a":"x"}`, string(d.Removed[0].Data))
	assert.Equal(t, 2, d.Unchanged)

	var out strings.Builder
	d.writeText(&out, "A", "B")
	assert.Equal(t, "--- A\n+++ B\ncolumn removed: note\n- row 4 (same): {\"q\":\"same\",\"a\":\"x\"}\n"+
		"row 2 (3*3): note \"hard\" → null\n0 added, 1 removed, 1 changed, 2 unchanged\n", out.String())
	assert.True(t, diffTestsetRows(b, b).empty())

	_, err := readRows(strings.NewReader(`{"not":"an array"}`))
	assert.ErrorContains(t, err, "not a JSON array")
}
