// Package writertest runs the real writer binary as a subprocess, so tests
// can push spans through the whole pipeline and kill -9 the writer.
package writertest

import (
	"testing"

	"github.com/assayhq/assay/pkg/testutil/svctest"
)

const pkg = "services/writer/cmd/writer"

// Binary builds services/writer once per test process and returns its path.
func Binary(t testing.TB) string { return svctest.Binary(t, pkg) }

// Writer is a running writer process.
type Writer struct {
	*svctest.Service
}

// Start runs the writer against natsURL and clickhouseURL and waits for its
// /ready; extra are more WRITER_* variables ("K=V"). It is stopped when the
// test ends.
func Start(t testing.TB, natsURL, clickhouseURL string, extra ...string) *Writer {
	t.Helper()
	return &Writer{svctest.Start(t, svctest.Options{
		Pkg:     pkg,
		AddrVar: "WRITER_ADDR",
		Env: append([]string{
			"WRITER_NATS_URL=" + natsURL,
			"WRITER_CLICKHOUSE_URL=" + clickhouseURL,
			"WRITER_LOG_LEVEL=warn",
			"WRITER_FLUSH_INTERVAL=200ms",
			"WRITER_ACK_WAIT=5s",
			"WRITER_RETRY_DELAY=500ms",
		}, extra...),
	})}
}
