// Package chserver runs a private ClickHouse server for one test, on free
// ports with its data in the test's temp folder, so the test can stop and
// restart it without disturbing the shared server other tests use.
package chserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/assayhq/assay/pkg/testutil/freeport"
)

// Server is a clickhouse-server child process.
type Server struct {
	t       testing.TB
	dir     string
	tcpPort int
	ports   []int
	// held are sockets bound (not listening) to the stopped server's
	// ports until Restart: no other server a parallel test starts
	// (freeport.Port picks any free port) can take one while this one is
	// down, and a client dialling it is still refused.
	held []int
	cmd  *exec.Cmd
	done chan struct{}
}

// Start launches a server (the binary scripts/deps.sh installs) and waits
// until it answers; it is stopped when the test ends.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// Options add to a server's configuration, for a cluster of servers.
type Options struct {
	// TCPPort is the native port; 0 picks one (freeport.Port).
	TCPPort int
	// Config is more XML inside <yandex> of config.xml (zookeeper, macros,
	// remote_servers, interserver_http_port).
	Config string
	// Profile is more XML inside the default user's profile.
	Profile string
	// UsersD is a users.d file (deployments/clickhouse/users.sh), placed
	// beside users.xml as the server's own users.d/assay.xml.
	UsersD string
}

// StartWith is Start with o added to the configuration.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	dir := t.TempDir()
	if o.TCPPort == 0 {
		o.TCPPort = freeport.Port(t)
	}
	s := &Server{t: t, dir: dir, tcpPort: o.TCPPort}
	httpPort := freeport.Port(t)
	s.ports = []int{s.tcpPort, httpPort}
	config := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/server.err.log</errorlog></logger>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/data/tmp/</tmp_path>
  <user_files_path>%[1]s/data/user_files/</user_files_path>
  <format_schema_path>%[1]s/data/format_schemas/</format_schema_path>
  <users_config>%[1]s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <timezone>UTC</timezone>
%[4]s
</yandex>
`, dir, httpPort, s.tcpPort, o.Config)
	users := `<?xml version="1.0"?>
<yandex>
  <profiles><default>` + o.Profile + `</default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
`
	if err := os.WriteFile(filepath.Join(dir, "config.xml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(users), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.UsersD != "" {
		if err := os.MkdirAll(filepath.Join(dir, "users.d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "users.d", "assay.xml"), []byte(o.UsersD), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Restart()
	t.Cleanup(func() { s.Stop(); s.release() })
	return s
}

// Port is the server's native-protocol port.
func (s *Server) Port() int { return s.tcpPort }

// URL is the native-protocol URL of database db on this server.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("clickhouse://default@127.0.0.1:%d/%s", s.tcpPort, db)
}

func binary() string {
	if p, err := exec.LookPath("clickhouse-server"); err == nil {
		return p
	}
	return "/usr/sbin/clickhouse-server"
}

// Restart starts the server again on the same ports and data, and waits
// until it answers queries.
func (s *Server) Restart() {
	s.t.Helper()
	s.release()
	cmd := exec.Command(binary(), "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("chserver: start clickhouse-server: %v (run scripts/deps.sh up to install it)", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if s.ping() == nil {
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.err.log"))
			s.t.Fatalf("chserver: clickhouse-server exited at start:\n%s", log)
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.t.Fatal("chserver: clickhouse-server did not answer within 60s")
}

func (s *Server) ping() error {
	opts, err := clickhouse.ParseDSN(s.URL("default"))
	if err != nil {
		return err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return conn.Ping(ctx)
}

// Stop terminates the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	for _, p := range s.ports {
		if fd, err := holdPort(p); err == nil {
			s.held = append(s.held, fd)
		}
	}
}

// holdPort binds a socket to 127.0.0.1:port without listening on it and
// without SO_REUSEADDR, which keeps every other bind of the port out (a
// server's SO_REUSEADDR needs it on both sockets) while connections to it
// are still refused, as to a stopped server.
func holdPort(port int) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return 0, err
	}
	return fd, nil
}

// release gives the held ports back.
func (s *Server) release() {
	for _, fd := range s.held {
		_ = syscall.Close(fd)
	}
	s.held = nil
}

// ErrorLog returns the server's error log, for a failing test to show.
func (s *Server) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.err.log"))
	return string(b)
}
