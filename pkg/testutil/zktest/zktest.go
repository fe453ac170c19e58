// Package zktest runs a standalone ZooKeeper (Debian's zookeeper package,
// /usr/share/java/zookeeper.jar) on a free loopback port for one test, to
// coordinate replicated ClickHouse tables.
package zktest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// Jar is where Debian's zookeeper package puts the server.
const Jar = "/usr/share/java/zookeeper.jar"

// Available reports whether ZooKeeper and a Java runtime are installed.
func Available() bool {
	if _, err := os.Stat(Jar); err != nil {
		return false
	}
	_, err := exec.LookPath("java")
	return err == nil
}

// Start runs ZooKeeper and waits until it accepts connections; it returns
// the client port. The server is killed when the test ends.
func Start(t testing.TB) int {
	t.Helper()
	dir := t.TempDir()
	port := freeport.Port(t)
	// tickTime 2 s: ClickHouse asks for 30 s sessions, more than a shorter
	// tick allows (20 ticks), and ZooKeeper then drops its handshake.
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr\n", filepath.Join(dir, "data"), port)
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "zk.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xmx256m", "-cp", Jar, "org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(dir, "zoo.cfg"))
	cmd.Stdout, cmd.Stderr = log, log
	svctest.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); <-done; log.Close() })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		// Listening is not serving: srvr names the mode only once it serves
		// (a client connecting before gets its handshake dropped).
		if serving(port) {
			return port
		}
		select {
		case <-done:
			b, _ := os.ReadFile(filepath.Join(dir, "zk.log"))
			t.Fatalf("zktest: zookeeper exited:\n%s", b)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("zktest: zookeeper not listening after 60s")
	return 0
}

func serving(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return false
	}
	b, _ := io.ReadAll(c)
	return strings.Contains(string(b), "Mode:")
}
