// Package natscluster runs a JetStream cluster of real nats-server
// processes on loopback (the server built from the version pkg/go.mod
// pins), so tests can kill -9 a node and restart it on its own store.
package natscluster

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

const serverPkg = "github.com/nats-io/nats-server/v2"

// Cluster is n nodes routed to each other.
type Cluster struct {
	Nodes []*Node
}

// Node is one nats-server process with its own ports and store.
type Node struct {
	t       testing.TB
	Name    string
	Client  string // host:port for clients
	monitor string // host:port of the monitoring endpoint (/healthz)
	conf    string
	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	log     *strings.Builder
}

// Start runs n nodes and waits until each reports JetStream healthy.
// They are stopped when the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := svctest.GoBinary(t, serverPkg)
	c := &Cluster{}
	var routes []string
	clusterAddrs := make([]string, n)
	for i := range n {
		clusterAddrs[i] = freeport.Addr(t)
		routes = append(routes, "nats-route://"+clusterAddrs[i])
	}
	for i := range n {
		dir := t.TempDir()
		node := &Node{t: t, Name: fmt.Sprintf("n%d", i+1), Client: freeport.Addr(t), monitor: freeport.Addr(t),
			conf: filepath.Join(dir, "nats.conf")}
		// max_payload as scripts/deps.sh: one message carries one ingest
		// request. max_file_store as natstest: fixed, not a share of the
		// free disk.
		conf := fmt.Sprintf(`server_name: %s
listen: %s
http: %s
max_payload: 16777216
jetstream { store_dir: %q, max_file_store: %d }
cluster {
  name: assay-test
  listen: %s
  routes: [%s]
}
`, node.Name, node.Client, node.monitor, filepath.Join(dir, "js"), natstest.MaxStore, clusterAddrs[i], strings.Join(routes, ", "))
		if err := os.WriteFile(node.conf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		node.start(bin)
		t.Cleanup(node.Kill)
		c.Nodes = append(c.Nodes, node)
	}
	for _, node := range c.Nodes {
		node.WaitHealthy(60 * time.Second)
	}
	return c
}

// URL is every node's client URL, comma separated, as *_NATS_URL takes it.
func (c *Cluster) URL() string {
	var urls []string
	for _, n := range c.Nodes {
		urls = append(urls, "nats://"+n.Client)
	}
	return strings.Join(urls, ",")
}

// Node returns the node named name (as JetStream reports a leader).
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func (n *Node) start(bin string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.log == nil {
		n.log = &strings.Builder{}
	} else {
		n.log.WriteString("--- restarted ---\n") // the log before the kill stays: it has the elections
	}
	cmd := exec.Command(bin, "-c", n.conf)
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: n.log, mu: &n.mu}, &lockedWriter{w: n.log, mu: &n.mu}
	svctest.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("natscluster: start %s: %v", n.Name, err)
	}
	n.cmd = cmd
	n.done = make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(n.done)
}

// Restart starts the killed node again on the same ports and store.
func (n *Node) Restart() {
	n.start(svctest.GoBinary(n.t, serverPkg))
}

// Kill sends SIGKILL and waits for the process to end.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// Log is what the node's server printed (its elections among it).
func (n *Node) Log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.log.String()
}

// WaitHealthy polls /healthz (JetStream up and, after a restart, caught up
// with its peers) until 200, failing the test after timeout.
func (n *Node) WaitHealthy(timeout time.Duration) {
	n.t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if res, err := client.Get("http://" + n.monitor + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.t.Fatalf("natscluster: %s not healthy after %s:\n%s", n.Name, timeout, n.log.String())
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
