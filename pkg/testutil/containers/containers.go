// Package containers starts PostgreSQL and ClickHouse with testcontainers-go.
// The test helpers use it only when no local server is configured (no
// TEST_POSTGRES_URL / TEST_CLICKHOUSE_URL) and a Docker engine answers;
// `make test` always configures local servers, so CI never needs Docker.
package containers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DockerAvailable reports whether a Docker engine answers.
func DockerAvailable(ctx context.Context) bool {
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return false
	}
	defer p.Close()
	return p.Health(ctx) == nil
}

var (
	pgOnce, chOnce sync.Once
	pgURL, chURL   string
	pgErr, chErr   error
)

// Postgres starts (once per test binary) a PostgreSQL 16 container and returns
// an admin URL to its "postgres" database. Ryuk removes it after the run.
func Postgres(ctx context.Context) (string, error) {
	pgOnce.Do(func() {
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:        "postgres:16-alpine",
				Env:          map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"},
				ExposedPorts: []string{"5432/tcp"},
				WaitingFor:   wait.ForListeningPort("5432/tcp").WithStartupTimeout(60 * time.Second),
			},
			Started: true,
		})
		if err != nil {
			pgErr = fmt.Errorf("start postgres container: %w", err)
			return
		}
		host, port, err := endpoint(ctx, c, "5432/tcp")
		pgURL, pgErr = fmt.Sprintf("postgres://postgres@%s:%s/postgres?sslmode=disable", host, port), err
	})
	return pgURL, pgErr
}

// ClickHouse starts (once per test binary) a ClickHouse 24 container and
// returns a native-protocol URL to its default database.
func ClickHouse(ctx context.Context) (string, error) {
	chOnce.Do(func() {
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:        "clickhouse/clickhouse-server:24.8",
				Env:          map[string]string{"CLICKHOUSE_SKIP_USER_SETUP": "1"},
				ExposedPorts: []string{"9000/tcp"},
				WaitingFor:   wait.ForListeningPort("9000/tcp").WithStartupTimeout(90 * time.Second),
			},
			Started: true,
		})
		if err != nil {
			chErr = fmt.Errorf("start clickhouse container: %w", err)
			return
		}
		host, port, err := endpoint(ctx, c, "9000/tcp")
		chURL, chErr = fmt.Sprintf("clickhouse://default@%s:%s/default", host, port), err
	})
	return chURL, chErr
}

func endpoint(ctx context.Context, c testcontainers.Container, port string) (string, string, error) {
	host, err := c.Host(ctx)
	if err != nil {
		return "", "", fmt.Errorf("container host: %w", err)
	}
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", "", fmt.Errorf("container port: %w", err)
	}
	return host, p.Port(), nil
}
