package chx_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/testutil/chserver"
)

// TestServiceUsers starts a private ClickHouse with the users that
// deployments/clickhouse/users.sh generates (as make up does) and shows each
// can do its service's work in the assay database and nothing outside it:
// the writer applies the schema and inserts, tracing inserts and deletes,
// the reader only reads; none reaches another database or creates one, and
// a wrong password is refused.
func TestServiceUsers(t *testing.T) {
	pw := map[string]string{"assay_writer": uuid.NewString(), "assay_tracing": uuid.NewString(), "assay_reader": uuid.NewString()}
	gen := exec.Command("bash", "../../deployments/clickhouse/users.sh")
	gen.Env = append(os.Environ(), "ASSAY_CH_WRITER_PASSWORD="+pw["assay_writer"],
		"ASSAY_CH_TRACING_PASSWORD="+pw["assay_tracing"], "ASSAY_CH_READER_PASSWORD="+pw["assay_reader"])
	users, err := gen.Output()
	require.NoError(t, err)
	srv := chserver.StartWith(t, chserver.Options{UsersD: string(users)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := func(user, password string) chx.Config {
		return chx.Config{URL: fmt.Sprintf("clickhouse://%s:%s@127.0.0.1:%d/assay", user, password, srv.Port()), DialTimeout: 5 * time.Second}
	}
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	sub, err := fs.Sub(testMigrations, "testdata/migrations")
	require.NoError(t, err)

	// The writer creates the database and applies the schema.
	require.NoError(t, chx.Migrate(ctx, cfg("assay_writer", pw["assay_writer"]), sub, "test_schema_version", log))
	writer, err := chx.Open(ctx, cfg("assay_writer", pw["assay_writer"]))
	require.NoError(t, err)
	defer writer.Close()
	// A batch insert, as the services do (an inline INSERT ... VALUES is
	// never answered by 18.16 through clickhouse-go).
	insert := func(c driver.Conn, id string) error {
		b, err := c.PrepareBatch(ctx, "INSERT INTO events (project_id, id, at, version)")
		if err != nil {
			return err
		}
		if err := b.Append(uuid.New(), id, time.Now().UTC().Truncate(time.Second), uint64(1)); err != nil {
			return err
		}
		return b.Send()
	}
	require.NoError(t, insert(writer, "w"))

	tracing, err := chx.Open(ctx, cfg("assay_tracing", pw["assay_tracing"]))
	require.NoError(t, err)
	defer tracing.Close()
	require.NoError(t, insert(tracing, "t"), "tracing writes tombstones")
	require.NoError(t, tracing.Exec(ctx, "ALTER TABLE events DELETE WHERE id = 'nothing'"), "tracing purges a project's spans")

	reader, err := chx.OpenReader(ctx, cfg("assay_reader", pw["assay_reader"]))
	require.NoError(t, err)
	defer reader.Close()
	var n uint64
	require.NoError(t, reader.QueryRow(ctx, "SELECT count() FROM events SETTINGS max_execution_time = 10").Scan(&n))
	assert.EqualValues(t, 2, n)
	assert.Error(t, insert(reader, "r"), "the reader inserted")
	assert.Error(t, reader.Exec(ctx, "ALTER TABLE events DELETE WHERE 1"), "the reader deleted")
	assert.Error(t, reader.Exec(ctx, "CREATE TABLE intruder (x UInt8) ENGINE = Memory"), "the reader created a table")
	assert.Error(t, reader.Exec(ctx, "DROP TABLE events"), "the reader dropped a table")

	// Outside the assay database, nobody.
	root, err := chx.Open(ctx, chx.Config{URL: srv.URL("default"), DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, root.Exec(ctx, "CREATE TABLE default.other (x UInt8) ENGINE = Memory"))
	for user, c := range map[string]driver.Conn{"assay_writer": writer, "assay_tracing": tracing, "assay_reader": reader} {
		assert.Error(t, c.Exec(ctx, "SELECT * FROM default.other"), "%s read another database", user)
		assert.Error(t, c.Exec(ctx, "INSERT INTO default.other SELECT 1"), "%s wrote another database", user)
		assert.Error(t, c.Exec(ctx, "CREATE DATABASE intruder"), "%s created a database", user)
	}
	_, err = chx.Open(ctx, cfg("assay_writer", pw["assay_tracing"]))
	assert.Error(t, err, "the writer got in with tracing's password")
	_, err = chx.Open(ctx, cfg("assay_writer", ""))
	assert.Error(t, err, "the writer got in without a password")
}
