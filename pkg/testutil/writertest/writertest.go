// Package writertest runs the real writer binary as a subprocess, so tests
// can push spans through the whole pipeline and kill -9 the writer.
package writertest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Binary builds services/writer once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		dir, err := os.MkdirTemp("", "assay-writer-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "writer")
		cmd := exec.Command("go", "build", "-o", binary, "./services/writer/cmd/writer")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build writer: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("writertest: %v", buildErr)
	}
	return binary
}

// Writer is a running writer process.
type Writer struct {
	t    testing.TB
	env  []string
	cmd  *exec.Cmd
	log  *syncBuffer
	mu   sync.Mutex
	Addr string
}

// Start runs the writer against natsURL and clickhouseURL; extra are more
// WRITER_* variables ("K=V"). It is stopped when the test ends.
func Start(t testing.TB, natsURL, clickhouseURL string, extra ...string) *Writer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	w := &Writer{t: t, Addr: addr, env: append([]string{
		"WRITER_NATS_URL=" + natsURL,
		"WRITER_CLICKHOUSE_URL=" + clickhouseURL,
		"WRITER_ADDR=" + addr,
		"WRITER_LOG_LEVEL=warn",
		"WRITER_FLUSH_INTERVAL=200ms",
		"WRITER_ACK_WAIT=5s",
		"WRITER_RETRY_DELAY=500ms",
		"PATH=" + os.Getenv("PATH"),
	}, extra...)}
	w.Restart()
	t.Cleanup(w.Stop)
	return w
}

// Restart starts the process again (after Kill or Stop).
func (w *Writer) Restart() {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = &syncBuffer{}
	cmd := exec.Command(Binary(w.t))
	cmd.Env = w.env
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("writertest: start writer: %v", err)
	}
	w.cmd = cmd
}

// Kill sends SIGKILL: no flush, no ack, no goodbye.
func (w *Writer) Kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd != nil {
		_ = w.cmd.Process.Signal(syscall.SIGKILL)
		_ = w.cmd.Wait()
		w.cmd = nil
	}
}

// Stop sends SIGTERM and waits for the drain; the log is shown on failure.
func (w *Writer) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		<-done
	}
	w.cmd = nil
	if w.t.Failed() {
		w.t.Logf("writer log:\n%s", w.log.String())
	}
}

// Log returns what the current process wrote.
func (w *Writer) Log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

// syncBuffer is written by exec's copying goroutines and read by Log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
