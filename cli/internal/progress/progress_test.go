package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	assert.Equal(t, "[>         ]   0%", Render(0, 10, 10))
	assert.Equal(t, "[=====>    ]  50%", Render(5, 10, 10))
	assert.Equal(t, "[==========] 100%", Render(12, 10, 10), "over the total is full, not wider")
	assert.Equal(t, "[          ]   ?%", Render(3, 0, 10))
}

// Off a terminal a bar prints whole lines, never carriage returns, and at
// most one per interval unless the line is final.
func TestPlainLines(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "run", time.Hour)
	require.False(t, b.tty)
	b.Update(1, 10, "1/10")
	b.Update(2, 10, "2/10")
	b.Done("10/10 done")
	assert.Equal(t, "run 1/10\nrun 10/10 done\n", buf.String())

	buf.Reset()
	r := &Reader{R: strings.NewReader(strings.Repeat("x", 3000)), Bar: New(&buf, "uploading", 0), Total: 3000}
	n, err := io.Copy(io.Discard, r)
	require.NoError(t, err)
	assert.EqualValues(t, 3000, n)
	assert.NotContains(t, buf.String(), "\r")
	assert.Contains(t, buf.String(), "uploading 2.9 KiB / 2.9 KiB\n")
}

func TestBytes(t *testing.T) {
	assert.Equal(t, "12 B", Bytes(12))
	assert.Equal(t, "1.5 KiB", Bytes(1536))
	assert.Equal(t, "3.0 MiB", Bytes(3<<20))
}
