// Package pgtest gives each caller a fresh PostgreSQL database on the server
// that `make test` started (TEST_POSTGRES_URL), or in a testcontainers-go
// container when that is unset and a Docker engine answers.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/testutil/containers"
)

// AdminURL returns the URL of a database the tests may create databases from.
func AdminURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("TEST_POSTGRES_URL"); u != "" {
		return u
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if containers.DockerAvailable(ctx) {
		u, err := containers.Postgres(ctx)
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		return u
	}
	t.Fatal("pgtest: no PostgreSQL: run the tests with `make test` (it starts one and sets TEST_POSTGRES_URL), or start a Docker engine")
	return ""
}

// NewURL creates an empty database and returns its URL; the database is
// dropped when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect %s: %v", admin, err)
	}
	defer conn.Close(ctx)
	name := "test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: parse %s: %v", admin, err)
	}
	u.Path = "/" + name
	return u.String()
}

// New returns a pool on a fresh database, closed and dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), NewURL(t))
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close) // registered last, so it runs before the drop
	return pool
}

// Must fails the test on err; a small helper for setup steps.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(fmt.Errorf("pgtest setup: %w", err))
	}
}
