package output

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	tb := Table{Header: []string{"id", "note"}, Rows: [][]string{{"1", "a, \"quoted\"\nline"}, {"22", "b"}}}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "table", tb))
	assert.Equal(t, "ID  NOTE\n1   a, \"quoted\"⏎line\n22  b\n", buf.String())
	buf.Reset()
	require.NoError(t, Write(&buf, "csv", tb))
	assert.Equal(t, "id,note\n1,\"a, \"\"quoted\"\"\nline\"\n22,b\n", buf.String())
	buf.Reset()
	require.NoError(t, Write(&buf, "json", tb))
	assert.JSONEq(t, `[{"id":"1","note":"a, \"quoted\"\nline"},{"id":"22","note":"b"}]`, buf.String())
	buf.Reset()
	tb.Raw = map[string]int{"n": 1}
	require.NoError(t, Write(&buf, "json", tb))
	assert.JSONEq(t, `{"n":1}`, buf.String(), "json prints the server's record when there is one")
}

func TestCell(t *testing.T) {
	assert.Equal(t, "3", Cell(3.0))
	assert.Equal(t, "0.125", Cell(0.125))
	assert.Equal(t, "0.3333", Num(1.0/3))
	assert.Equal(t, `{"a":[1,true]}`, Cell(map[string]any{"a": []any{1.0, true}}))
	assert.Equal(t, "", Cell(nil))
}
