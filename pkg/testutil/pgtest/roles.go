package pgtest

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
)

// RolesSQL is the path of deployments/postgres/roles.sql, the script that
// creates the services' owner and app roles.
func RolesSQL() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "deployments", "postgres", "roles.sql")
}

// Roles applies deployments/postgres/roles.sql with psql to the database at
// dbURL (a NewURL database), with role names of this test's own, and returns
// the URLs of the owner role (migrations) and the app role (the services'
// connections). The roles are dropped when the test ends.
func Roles(t testing.TB, dbURL string) (ownerURL, appURL string) {
	t.Helper()
	suffix := strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	owner, app := "owner_"+suffix, "app_"+suffix
	ownerPw, appPw := uuid.NewString(), uuid.NewString()
	out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-v", "owner="+owner, "-v", "owner_password="+ownerPw,
		"-v", "app="+app, "-v", "app_password="+appPw,
		"-f", RolesSQL(), "-d", dbURL).CombinedOutput()
	if err != nil {
		t.Fatalf("pgtest: psql roles.sql: %v\n%s", err, out)
	}
	// Registered after NewURL's drop, so it runs first: the roles own the
	// database and its objects until they are handed back.
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Logf("pgtest: drop roles: %v", err)
			return
		}
		defer c.Close(ctx)
		for _, q := range []string{
			"REASSIGN OWNED BY " + owner + ", " + app + " TO CURRENT_USER",
			"DROP OWNED BY " + owner + ", " + app,
			"DROP ROLE " + owner, "DROP ROLE " + app,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("pgtest: %s: %v", q, err)
			}
		}
	})
	as := func(user, pw string) string {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, pw)
		return u.String()
	}
	return as(owner, ownerPw), as(app, appPw)
}

// CheckMigratesAsOwner applies a service's real migrations (fsys, recorded
// in versionTable) as the owner role of deployments/postgres/roles.sql, and
// checks that the app role the service runs as reads and writes every table
// they create, listens and notifies, yet cannot change the schema.
func CheckMigratesAsOwner(t *testing.T, fsys fs.FS, versionTable string) {
	t.Helper()
	ctx := context.Background()
	ownerURL, appURL := Roles(t, NewURL(t))
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	cfg := pgxutil.Config{URL: appURL, MigrateURL: ownerURL, MaxConns: 2}
	pool, err := pgxutil.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: open as the app role: %v", err)
	}
	defer pool.Close()
	if err := pgxutil.MigrateAs(ctx, cfg, pool, fsys, versionTable, log); err != nil {
		t.Fatalf("pgtest: migrate as the owner role: %v", err)
	}
	rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("pgtest: the migrations created no table")
	}
	for _, tb := range tables {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT has_table_privilege($1, 'SELECT, INSERT, UPDATE, DELETE') AND NOT has_table_privilege($1, 'TRUNCATE, REFERENCES, TRIGGER')`, tb).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("the app role's privileges on %s are not exactly read and write", tb)
		}
		if _, err := pool.Exec(ctx, "ALTER TABLE "+tb+" ADD COLUMN intruder int"); err == nil {
			t.Errorf("the app role altered %s", tb)
		}
	}
	for _, q := range []string{"LISTEN assay_api_keys", "SELECT pg_notify('assay_api_keys', 'x')"} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Errorf("the app role cannot %s: %v", q, err)
		}
	}
}
