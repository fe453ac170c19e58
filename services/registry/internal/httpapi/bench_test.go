package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchCSV makes n rows of 5 columns, about 200 bytes a row.
func benchCSV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("question,context,answer,category,difficulty\n")
	for i := range n {
		fmt.Fprintf(&b, "What is the capital of country number %d in the list?,%s,Capital %d,geo-%d,%d\n",
			i, strings.Repeat("ctx", 40), i, i%17, i%5)
	}
	return b.Bytes()
}

func benchmarkUpload(b *testing.B, rows int) {
	s := newServer(&testing.T{})
	file := benchCSV(rows)
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for range b.N {
		r := s.upload(&testing.T{}, "/simple/testsets/upload", map[string]string{"file_type": "csv"}, "b.csv", file)
		if r.status != http.StatusOK {
			b.Fatalf("%d %s", r.status, r.body[:min(len(r.body), 200)])
		}
	}
}

// BenchmarkUpload10k and BenchmarkUpload100k measure a CSV upload through
// the registry's HTTP stack into PostgreSQL, response included.
func BenchmarkUpload10k(b *testing.B)  { benchmarkUpload(b, 10_000) }
func BenchmarkUpload100k(b *testing.B) { benchmarkUpload(b, 100_000) }

// BenchmarkRetrieve10k measures retrieving a 10,000-row revision with its
// testcases.
func BenchmarkRetrieve10k(b *testing.B) {
	t := &testing.T{}
	s := newServer(t)
	r := s.upload(t, "/simple/testsets/upload", nil, "b.csv", benchCSV(10_000))
	require.Equal(b, http.StatusOK, r.status)
	rev := str(obj(t, r.json(t), "testset")["revision_id"])
	b.ResetTimer()
	for range b.N {
		out := s.do(t, "POST", "/testsets/revisions/retrieve", map[string]any{"testset_revision_ref": map[string]any{"id": rev}})
		if out.status != http.StatusOK {
			b.Fatal(out.status)
		}
	}
}
