// Package chtest gives each caller a fresh ClickHouse database on the server
// that `make test` started (TEST_CLICKHOUSE_URL), or in a testcontainers-go
// container when that is unset and a Docker engine answers.
package chtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/testutil/containers"
)

// AdminURL returns the URL of the server's default database.
func AdminURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("TEST_CLICKHOUSE_URL"); u != "" {
		return u
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if containers.DockerAvailable(ctx) {
		u, err := containers.ClickHouse(ctx)
		if err != nil {
			t.Fatalf("chtest: %v", err)
		}
		return u
	}
	t.Fatal("chtest: no ClickHouse: run the tests with `make test` (it starts one and sets TEST_CLICKHOUSE_URL), or start a Docker engine")
	return ""
}

// NewURL returns the URL of a database name that does not exist yet (chx.Open
// and chx.Migrate create it); it is dropped when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	name := "test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	u, err := chx.WithDatabase(admin, name)
	if err != nil {
		t.Fatalf("chtest: %v", err)
	}
	t.Cleanup(func() {
		opts, err := clickhouse.ParseDSN(admin)
		if err != nil {
			return
		}
		conn, err := clickhouse.Open(opts)
		if err != nil {
			t.Logf("chtest: drop %s: %v", name, err)
			return
		}
		defer conn.Close()
		if err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Logf("chtest: drop %s: %v", name, err)
		}
	})
	return u
}
